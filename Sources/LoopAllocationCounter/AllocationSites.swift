import CAllocationCounter
import PThreads
import RunLoopCore

/// The kind of span memory is attributed to.
public enum AllocationScopeKind: Sendable, Equatable, CustomStringConvertible {
    /// A loop callout (observer, block, source0, port message, fd source, timer, job…).
    case callout(LoopEvent.Callout)
    /// A layer's layout (see ``AllocationAttributor/measureLayoutAndDisplay(of:)``).
    case layout
    /// A layer's display.
    case display
    /// A span measured with ``AllocationAttributor/measure(_:_:)``.
    case measured
    /// A turn, outside every callout.
    case outside

    public var description: String {
        switch self {
        case .callout(let kind): "\(kind)"
        case .layout: "layout"
        case .display: "display"
        case .measured: "measured"
        case .outside: "outside"
        }
    }
}

/// Where live bytes were allocated: a kind of span and its label.
public struct AllocationSite: Sendable, Hashable, CustomStringConvertible {
    public let kind: String
    public let label: String

    public init(kind: String, label: String) {
        self.kind = kind
        self.label = label
    }
    public var description: String { label.isEmpty ? kind : "\(kind) \(label)" }

    /// Blocks allocated on threads no attributor watches (or before one started): site 0.
    public static let unattributed = AllocationSite(kind: "unattributed", label: "")
    /// Blocks a watched loop allocated during a turn but outside its callouts.
    public static let outsideCallouts = AllocationSite(kind: "loop", label: "outside callouts")
}

/// Small dense numbers for sites, so the C side tags blocks with a 32-bit value.
enum AllocationSites {
    private static let registry = Locked(Registry())

    struct Registry {
        var numbers: [AllocationSite: UInt32] = [:]
        var sites: [AllocationSite] = [.unattributed]
    }

    /// The site's number (registering it); the last number takes every site beyond the limit.
    static func number(for site: AllocationSite) -> UInt32 {
        registry.withLock { registry in
            if let number = registry.numbers[site] { return number }
            let limit = UInt32(RLK_ALLOC_MAX_SITES) - 1
            guard registry.sites.count < Int(limit) else { return limit }
            let number = UInt32(registry.sites.count)
            registry.sites.append(site)
            registry.numbers[site] = number
            rlk_alloc_set_site_count(UInt32(registry.sites.count))
            return number
        }
    }

    static func site(_ number: UInt32) -> AllocationSite {
        registry.withLock { registry in
            Int(number) < registry.sites.count ? registry.sites[Int(number)] : AllocationSite(kind: "other", label: "(sites beyond the limit)")
        }
    }

    static var count: Int { registry.withLock { $0.sites.count } }
}
