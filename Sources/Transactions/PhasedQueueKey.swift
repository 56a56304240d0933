/// A key of a `PhasedQueue`. For most keys the conformance is empty: the queue then records
/// which keys wait in a phase in a hashed set (`HashedPhaseMembership`).
///
/// A key that stands for an object able to carry a flag per phase can name its own
/// `Membership` instead, so that marking and draining cost no hashing; the layer pipeline's
/// keys keep a bit per phase in the layer. The queue is generic over the key, so the compiler
/// specialises it for that membership: no closure call, no dynamic cast.
///
/// ```swift
/// enum Work: PhasedQueueKey { case recompute(String), writeOut(String) }
/// let queue = PhasedQueue<Work>(phases: [.init("recompute"), .init("write out")])
/// ```
public protocol PhasedQueueKey: Hashable {
    /// Where the queue records that a key waits in a phase. Default: a hashed set per phase.
    associatedtype Membership: PhaseMembership = HashedPhaseMembership<Self> where Membership.Key == Self
}

/// Records which keys wait in one phase of a `PhasedQueue`. The queue keeps one value per
/// phase, created with `init()`, and calls `insert` when a key starts waiting in that phase and
/// `remove` when it stops (performed, removed, or dropped by `removeAll()`), so a membership kept
/// in the keys themselves is always cleared.
///
/// ```swift
/// /// Keys are node indices; membership is a bit per phase in a shared flag array.
/// struct NodeKey: PhasedQueueKey { typealias Membership = NodeFlags; let index: Int }
/// struct NodeFlags: PhaseMembership {
///     func contains(_ key: NodeKey, phase: Int) -> Bool { flags[key.index] & (1 << phase) != 0 }
///     mutating func insert(_ key: NodeKey, phase: Int) -> Bool { … }
///     mutating func remove(_ key: NodeKey, phase: Int) -> Bool { … }
/// }
/// ```
public protocol PhaseMembership {
    /// The queue's key type.
    associatedtype Key
    /// An empty membership (no key waiting).
    init()
    /// Whether `key` waits in `phase`.
    func contains(_ key: Key, phase: Int) -> Bool
    /// Records `key` as waiting in `phase`; returns false (and changes nothing) when it already was.
    mutating func insert(_ key: Key, phase: Int) -> Bool
    /// Records `key` as no longer waiting in `phase`; returns false when it was not waiting.
    mutating func remove(_ key: Key, phase: Int) -> Bool
}

/// The default membership: the keys waiting in a phase, in a `Set`.
public struct HashedPhaseMembership<Key: Hashable>: PhaseMembership {
    private var keys: Set<Key> = []

    public init() {}

    public func contains(_ key: Key, phase: Int) -> Bool { keys.contains(key) }

    public mutating func insert(_ key: Key, phase: Int) -> Bool { keys.insert(key).inserted }

    public mutating func remove(_ key: Key, phase: Int) -> Bool { keys.remove(key) != nil }
}

extension String: PhasedQueueKey {}
extension Int: PhasedQueueKey {}
