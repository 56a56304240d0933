import CAllocationCounter

/// A mark in the allocation history (generations mode): what is still live since the mark,
/// and which callouts allocated it — Instruments' "Mark Generation".
///
/// ```swift
/// AllocationCounter.mode = .generations
/// let generation = AllocationGeneration.mark()
/// loop.run(mode: .default, timeout: .zero)
/// let live = generation.live()
/// print(live.bytes, live.bySite.first?.site.description ?? "nothing")
/// ```
public struct AllocationGeneration: Sendable, Equatable {
    /// Blocks allocated after the mark carry this number or a later one.
    public let number: UInt64

    /// Starts a generation. Blocks are tracked only in ``AllocationCounter/Mode/generations``.
    public static func mark() -> AllocationGeneration {
        AllocationGeneration(number: rlk_alloc_generation_mark())
    }

    /// Every tracked block allocated since this mark and not freed yet, by site, largest first.
    /// Blocks a watched loop allocated outside its callouts count under
    /// ``AllocationSite/outsideCallouts``; blocks of other threads under
    /// ``AllocationSite/unattributed``.
    public func live() -> GenerationReport {
        AllocationCounter.ignoring {
            let sites = AllocationSites.count
            var bytes = [Int64](repeating: 0, count: sites)
            var counts = [UInt64](repeating: 0, count: sites)
            let blocks = bytes.withUnsafeMutableBufferPointer { b in
                counts.withUnsafeMutableBufferPointer { c in
                    rlk_alloc_generation_live(number, b.baseAddress, c.baseAddress, UInt32(sites))
                }
            }
            var bySite: [SiteLiveBytes] = []
            for index in 0..<sites where counts[index] > 0 {
                bySite.append(SiteLiveBytes(site: AllocationSites.site(UInt32(index)), bytes: bytes[index], blocks: counts[index]))
            }
            bySite.sort { $0.bytes != $1.bytes ? $0.bytes > $1.bytes : $0.site.description < $1.site.description }
            return GenerationReport(generation: number, bytes: bytes.reduce(0, +), blocks: blocks, bySite: bySite)
        }
    }
}

/// What a generation still holds.
public struct GenerationReport: Sendable, Equatable {
    public let generation: UInt64
    /// Usable bytes still live.
    public let bytes: Int64
    /// Blocks still live.
    public let blocks: UInt64
    /// Per site, largest first.
    public let bySite: [SiteLiveBytes]
}
