import Glibc
import Testing
import Autorelease
import LoopAllocationCounter
import RunLoopCore
import Transactions

/// Pointers and sizes shared with callouts, in memory allocated before the run, so storing
/// into them allocates nothing inside the callouts being measured.
final class Slots: @unchecked Sendable {   // Sendable: touched only on the loop's (the test's) thread
    let pointers = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 16)
    let sizes = UnsafeMutablePointer<UInt64>.allocate(capacity: 16)
    init() {
        pointers.initialize(repeating: nil, count: 16)
        sizes.initialize(repeating: 0, count: 16)
    }
    deinit {
        pointers.deallocate()
        sizes.deallocate()
    }
    func allocate(_ slot: Int, _ bytes: Int) {
        pointers[slot] = malloc(bytes)
        sizes[slot] = usable(pointers[slot])
    }
    func free(_ slot: Int) {
        Glibc.free(pointers[slot])
        pointers[slot] = nil
    }
}

/// A layer handed to a callout (the test's thread runs the loop, so it never crosses threads).
final class LayerBox: @unchecked Sendable {   // Sendable: used only on the test's thread
    let root: Layer
    let child: Layer
    init() {
        root = Layer(name: "root")
        child = Layer(name: "child")
        root.addSublayer(child)
    }
}

final class Object {}

@Suite(.enabled(if: interposing, "the allocator is not interposed (sanitizer build)"))
struct AttributionTests {
    /// A block keeps 1000 bytes; the BeforeWaiting observer frees them; after the sleep a timer
    /// allocates three blocks of 200 and frees two. Every figure is checked to the byte against
    /// glibc's usable sizes of the very blocks.
    @Test func calloutsAndTurnsGetExactFigures() throws {
        let slots = Slots()
        let attributor = AllocationAttributor()
        let (callouts, turns) = try AllocationCounter.withMode(.counting) { () throws -> ([CalloutAllocation], [TurnAllocation]) in
            let clock = VirtualClock()
            let loop = Loop(clock: clock)
            loop.perform(label: "keeps 1000") { slots.allocate(0, 1000) }
            let observer = LoopObserver(activities: .beforeWaiting, repeats: false, label: "frees the 1000") { _, _ in slots.free(0) }
            loop.add(observer, mode: .default)
            let timer = try LoopTimer(after: .milliseconds(500), clock: clock, label: "three of 200") { _ in
                slots.allocate(1, 200)
                slots.allocate(2, 200)
                slots.allocate(3, 200)
                slots.free(1)
                slots.free(2)
            }
            loop.add(timer, mode: .default)
            attributor.install(on: loop)
            loop.run(mode: .default, timeout: 1)
            slots.free(3)
            attributor.uninstall(from: loop)
            return (attributor.callouts, attributor.turns)
        }
        let thousand = slots.sizes[0]
        let two = (slots.sizes[1], slots.sizes[2], slots.sizes[3])
        #expect(thousand >= glibcUsable(1000) && thousand <= glibcUsable(1000) + 24)

        let block = try #require(callouts.first { $0.label == "keeps 1000" })
        #expect(block.kind == .callout(.block))
        #expect(block.turn == 1 && block.depth == 0)
        #expect(block.user == AllocationFigures(allocations: 1, frees: 0, bytes: thousand, freedBytes: 0, requestedBytes: 1000,
                                                net: Int64(thousand), peak: Int64(thousand)))
        let observer = try #require(callouts.first { $0.label == "frees the 1000" })
        #expect(observer.user == AllocationFigures(allocations: 0, frees: 1, bytes: 0, freedBytes: thousand, requestedBytes: 0,
                                                   net: -Int64(thousand), peak: 0))
        let timer = try #require(callouts.first { $0.label == "three of 200" })
        #expect(timer.kind == .callout(.timer))
        #expect(timer.turn == 2)
        #expect(timer.user == AllocationFigures(allocations: 3, frees: 2, bytes: two.0 + two.1 + two.2, freedBytes: two.0 + two.1,
                                                requestedBytes: 600, net: Int64(two.2), peak: Int64(two.0 + two.1 + two.2)))
        #expect(callouts.allSatisfy { $0.poolPages == .zero })

        // Turn 1: run start to the sleep (the block and the observer); turn 2: wake to run end.
        // A turn also holds what the loop allocates itself (its first run sets up its mode).
        #expect(turns.count == 2)
        #expect(callouts[turns[0].callouts].map(\.label).contains("keeps 1000"))
        #expect(callouts[turns[1].callouts].map(\.label) == ["three of 200"])
        #expect(turns[0].user.peak >= Int64(thousand))
        #expect(turns[1].user.allocations >= 3 && turns[1].user.peak >= timer.user.peak)
    }

    /// A source0 and a port message get their own records with their kinds; the port's message
    /// itself (allocated by `send` before the run) is not the handler's.
    @Test func sourcesAndPortMessagesAreAttributed() throws {
        let slots = Slots()
        let attributor = AllocationAttributor()
        let callouts = try AllocationCounter.withMode(.counting) { () throws -> [CalloutAllocation] in
            let loop = Loop(clock: VirtualClock())
            let source = LoopSource(label: "source allocates 700") { slots.allocate(11, 700) }
            let port = try LoopPortSource(label: "port frees the 700") { _ in slots.free(11) }
            loop.add(source, mode: .default)
            loop.add(port, mode: .default)
            source.signal()
            try port.send([1])
            attributor.install(on: loop)
            loop.run(mode: .default, timeout: .zero)
            loop.run(mode: .default, timeout: .zero)
            attributor.uninstall(from: loop)
            port.invalidate()
            source.invalidate()
            return attributor.callouts
        }
        let source = try #require(callouts.first { $0.label == "source allocates 700" })
        let port = try #require(callouts.first { $0.label == "port frees the 700" })
        #expect(source.kind == .callout(.source0))
        #expect(port.kind == .callout(.source1))
        #expect(source.user == AllocationFigures(allocations: 1, frees: 0, bytes: slots.sizes[11], freedBytes: 0, requestedBytes: 700,
                                                 net: Int64(slots.sizes[11]), peak: Int64(slots.sizes[11])))
        #expect(port.user.frees >= 1 && port.user.freedBytes >= slots.sizes[11])
    }

    /// Sampling mode: a callout's sampledBytes are its samples times the interval; frees and
    /// counts are not kept.
    @Test func samplingAttributesSampledBytes() throws {
        let slots = Slots()
        let attributor = AllocationAttributor()
        let callouts = AllocationCounter.withMode(.sampling(everyBytes: 1000)) { () -> [CalloutAllocation] in
            let loop = Loop(clock: VirtualClock())
            loop.perform(label: "ten of 1000") {
                for _ in 0..<10 {
                    slots.allocate(12, 1000)
                    slots.free(12)
                }
            }
            attributor.install(on: loop)
            loop.run(mode: .default, timeout: .zero)
            attributor.uninstall(from: loop)
            return attributor.callouts
        }
        let callout = try #require(callouts.first { $0.label == "ten of 1000" })
        // 10,000 requested bytes cross 10 marks, or 11 with the countdown carried in.
        #expect(callout.sampledBytes == 10_000 || callout.sampledBytes == 11_000)
        #expect(callout.user == .zero)
    }

    /// In a steady state every turn costs the same: from the third turn on, each turn holds the
    /// timer's figures plus the loop's own per-turn allocations, identical from turn to turn.
    @Test func steadyTurnsHoldExactlyTheirCallouts() async {
        // Byte-exact figures need a process of their own: in the shared test process, objects
        // other tests release on this thread (or lazily built globals) would count here too.
        await #expect(processExitsWith: .success) {
            let slots = Slots()
            let attributor = AllocationAttributor()
            let (callouts, turns) = try AllocationCounter.withMode(.counting) { () throws -> ([CalloutAllocation], [TurnAllocation]) in
                let clock = VirtualClock()
                let loop = Loop(clock: clock)
                let timer = try LoopTimer(after: .milliseconds(100), clock: clock, interval: .milliseconds(100), label: "tick") { _ in
                    slots.allocate(0, 256)
                    slots.free(0)
                }
                loop.add(timer, mode: .default)
                attributor.install(on: loop)
                loop.run(mode: .default, timeout: 1)
                attributor.uninstall(from: loop)
                return (attributor.callouts, attributor.turns)
            }
            #expect(turns.count >= 8)
            let steady = Array(turns.dropFirst(2).dropLast())
            for turn in steady {
                let ticks = callouts[turn.callouts].filter { $0.label == "tick" }
                #expect(ticks.count == 1)
                #expect(ticks.first?.user == AllocationFigures(allocations: 1, frees: 1, bytes: slots.sizes[0], freedBytes: slots.sizes[0],
                                                               requestedBytes: 256, net: 0, peak: Int64(slots.sizes[0])))
                #expect(turn.user == steady[0].user, "turn \(turn.number)")
                #expect(turn.user.net == 0 && turn.user.peak >= Int64(slots.sizes[0]))
                #expect(turn.outsideCallouts.allocations == turn.user.allocations - 1)
            }
        }
    }

    /// Pool pages land in `poolPages`, not in `user`: 1200 autoreleased objects need three pages.
    @Test func poolPagesAreReportedApart() throws {
        let attributor = AllocationAttributor()
        let (callouts, pageSize) = AllocationCounter.withMode(.counting) { () -> ([CalloutAllocation], UInt64) in
            let loop = Loop(clock: VirtualClock())
            // Warm the thread's pool (its first use allocates its state once).
            withAutoreleasePool { _ = AutoreleasePool.autorelease(Object()) }
            loop.perform(label: "autoreleases 1200") {
                withAutoreleasePool {
                    for _ in 0..<1200 { _ = AutoreleasePool.autorelease(Object()) }
                }
            }
            attributor.install(on: loop)
            loop.run(mode: .default, timeout: .zero)
            attributor.uninstall(from: loop)
            var page: UnsafeMutableRawPointer?
            _ = posix_memalign(&page, 4096, 4096)
            defer { free(page) }
            return (attributor.callouts, usable(page))
        }
        let callout = try #require(callouts.first { $0.label == "autoreleases 1200" })
        // 1200 objects of 16 bytes (a Swift object header): each a 24-byte usable block, all freed by the pop.
        #expect(callout.user.allocations == 1200)
        #expect(callout.user.frees == 1200)
        #expect(callout.user.net == 0)
        // Each usable block is 24 bytes, or up to 24 more when glibc hands out a whole free chunk.
        #expect(callout.user.bytes >= 1200 * glibcUsable(16) && callout.user.bytes <= 1200 * (glibcUsable(16) + 24))
        #expect(callout.user.bytes == callout.user.freedBytes)
        // A 4096-byte page holds 505 entries after its 56-byte header: 1201 entries (with the
        // pool boundary) need pages 2 and 3 beyond the hot one the warm-up left.
        #expect(callout.poolPages.allocations >= 2)
        // Each page's usable size is a fresh page's, or up to one minimum chunk (32 bytes) more
        // when glibc hands out a free chunk it cannot split (a run once read 8240 for 2 × 4104).
        #expect(callout.poolPages.bytes >= callout.poolPages.allocations * pageSize
                && callout.poolPages.bytes <= callout.poolPages.allocations * (pageSize + 32),
                "\(callout.poolPages.bytes) bytes in \(callout.poolPages.allocations) pages of \(pageSize)")
        #expect(callout.poolPages.peak >= Int64(2 * pageSize))
    }

    /// Layout and display of each layer are spans of their own inside the committing callout.
    @Test func layoutAndDisplayOfALayerAreMeasured() throws {
        let slots = Slots()
        let layers = LayerBox()
        let attributor = AllocationAttributor()
        let callouts = AllocationCounter.withMode(.counting) { () -> [CalloutAllocation] in
            let loop = Loop(clock: VirtualClock())
            layers.root.onLayout = { _ in slots.allocate(4, 300) }
            layers.child.onDisplay = { _, _ in slots.allocate(5, 500) }
            attributor.measureLayoutAndDisplay(of: layers.root)
            loop.perform(label: "commit") {
                layers.root.setNeedsLayout()
                layers.child.setNeedsDisplay()
                layers.root.layoutIfNeeded()
                layers.child.displayIfNeeded()
            }
            attributor.install(on: loop)
            loop.run(mode: .default, timeout: .zero)
            attributor.uninstall(from: loop)
            // The marks opened this thread's implicit transaction; close it here, or the shared
            // test thread ends with it open later (commit.thread-exited-uncommitted).
            LayerTransaction.flush()
            slots.free(4)
            slots.free(5)
            return attributor.callouts
        }
        let layout = try #require(callouts.first { $0.kind == .layout })
        let display = try #require(callouts.first { $0.kind == .display })
        let commit = try #require(callouts.first { $0.label == "commit" })
        #expect(layout.label == "root" && layout.depth == 1)
        #expect(display.label == "child" && display.depth == 1)
        #expect(layout.user.allocations == 1 && layout.user.bytes == slots.sizes[4] && layout.user.requestedBytes == 300)
        #expect(display.user.allocations == 1 && display.user.bytes == slots.sizes[5] && display.user.requestedBytes == 500)
        // The commit callout contains both spans.
        #expect(commit.user.bytes >= slots.sizes[4] + slots.sizes[5])
    }

    /// Generations: blocks allocated after the mark and still live, by the callout that made
    /// them; the turn's peak snapshot names the callout holding the most at the peak.
    @Test func generationsAndPeakSnapshots() async {
        // Byte-exact figures need a process of their own: in the shared test process, objects
        // other tests release on this thread (or lazily built globals) would count here too.
        await #expect(processExitsWith: .success) {
            let slots = Slots()
            let attributor = AllocationAttributor()
            // A loop's first run in a process instantiates the run-time metadata of the types
            // its pass uses (a debug build's generics): a process-lifetime cache, made here,
            // before the mark, so the blocks counted are the callouts' own.
            let warmUp = Loop(clock: VirtualClock())
            warmUp.add(LoopObserver(activities: .beforeWaiting) { _, _ in }, mode: .default)
            warmUp.perform(label: "warm-up") {}
            warmUp.run(mode: .default, timeout: 1)
            warmUp.tearDown()
            let (report, turns) = AllocationCounter.withMode(.generations) { () -> (GenerationReport, [TurnAllocation]) in
                let loop = Loop(clock: VirtualClock())
                let generation = AllocationGeneration.mark()
                loop.perform(label: "burst") {
                    for slot in 6..<10 { slots.allocate(slot, 4000) }
                }
                loop.perform(label: "small") { slots.allocate(10, 100) }
                let release = LoopObserver(activities: .beforeWaiting, repeats: false, label: "release burst") { _, _ in
                    for slot in 6..<9 { slots.free(slot) }
                }
                loop.add(release, mode: .default)
                attributor.install(on: loop)
                loop.run(mode: .default, timeout: 1)
                attributor.uninstall(from: loop)
                let report = generation.live()
                slots.free(9)
                slots.free(10)
                return (report, attributor.turns)
            }
            let burst = try #require(report.bySite.first { $0.site.label == "burst" })
            #expect(burst.blocks == 1 && burst.bytes == Int64(slots.sizes[9]), "\(report)")
            let small = try #require(report.bySite.first { $0.site.label == "small" })
            #expect(small.blocks == 1 && small.bytes == Int64(slots.sizes[10]))
            // Other tests' threads allocate meanwhile: their blocks are "unattributed".
            #expect(report.bySite.first { $0.site != .unattributed }?.site.label == "burst")
            // The first turn: at its peak the burst held all four blocks.
            let turn = try #require(turns.first)
            let top = try #require(turn.peakSnapshot.first)
            #expect(top.site == AllocationSite(kind: "block", label: "burst"))
            #expect(top.bytes >= Int64(slots.sizes[6] + slots.sizes[7] + slots.sizes[8] + slots.sizes[9]))
        }
    }
}
