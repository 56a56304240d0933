import PThreads
import Synchronization

/// Observes a loop's activities (O1–O6).
///
/// Observers in a mode are called in ascending `order`, ties in insertion order. A
/// non-repeating observer fires once and is then invalidated. An observer belongs to one loop
/// (it may be in several of its modes); adding it to another loop is ignored.
///
/// ```swift
/// let observer = LoopObserver(activities: [.beforeWaiting, .exit], order: 2_000_000, label: "commit") { _, activity in
///     print("commit at", activity.cfName)
/// }
/// Loop.current.add(observer, mode: .common)
/// ```
public final class LoopObserver: Sendable {
    public let activities: Loop.Activity
    public let repeats: Bool
    public let order: Int
    public let label: String
    /// `sending`, not `Sendable`: only the thread of the one loop the observer is bound to
    /// calls it (`ItemCore.boundLoop`), never two threads at once; hence `nonisolated(unsafe)`.
    nonisolated(unsafe) let callout: (LoopObserver, Loop.Activity) -> Void
    let core = ItemCore()
    /// Set while its callout runs, so a nested run does not re-enter it (O5). Only the loop's
    /// own thread fires an observer, so this is confined to that thread.
    let firing = Atomic<Bool>(false)

    public init(activities: Loop.Activity, repeats: Bool = true, order: Int = 0, label: String = "observer",
                _ callout: sending @escaping (LoopObserver, Loop.Activity) -> Void) {
        self.activities = activities
        self.repeats = repeats
        self.order = order
        self.label = label
        self.callout = callout
    }

    /// False after `invalidate()` (or after a non-repeating observer fired).
    public var isValid: Bool { core.isValid }

    /// Stops the observer for good and removes it from every mode of its loop (O6).
    public func invalidate() {
        guard let loops = core.invalidate() else { return }
        for loop in loops { loop.purgeItem(self) }
    }
}

/// A version-0 source: signalled by hand, performed by the loop (S1–S6).
///
/// `signal()` does not wake the loop (S1): call `wakeUp()` on the loop afterwards when it may be
/// sleeping. Signalled sources run in ascending `order`, ties in signal order (S2).
///
/// ```swift
/// let source = LoopSource(label: "reload") { print("perform") }
/// loop.add(source, mode: .default)
/// source.signal(); loop.wakeUp()
/// ```
public final class LoopSource: Sendable {
    public let order: Int
    public let label: String
    // `@Sendable`: a source0 may be in several loops (S5), so their threads may perform it at
    // once, and schedule/cancel run on whichever thread adds or removes it.
    let scheduleCallout: (@Sendable (Loop, Loop.Mode) -> Void)?
    let cancelCallout: (@Sendable (Loop, Loop.Mode) -> Void)?
    let perform: @Sendable () -> Void
    /// Its id, validity and lock; not its loops, which `homes` keeps (a source0 may be in
    /// several, S5).
    let core = ItemCore()
    /// The loops holding the source, with how many of each one's modes hold it. Under
    /// `core.lock`; `nonisolated(unsafe)` as the lock serialises it.
    nonisolated(unsafe) var homes: [Home] = []
    /// 0 when not signalled; otherwise the stamp of the first signal (S1: first signal wins).
    /// Written under core.lock by `signal`/`invalidate`; the loop reads and clears it atomically.
    let signalStamp = Atomic<UInt64>(0)
    /// One per mode holding the source (`SignalledSources.swift`), under `core.lock`.
    /// `nonisolated(unsafe)`, `@exclusivity(unchecked)`: the lock serialises access; `signal`
    /// reads it on every call.
    @exclusivity(unchecked) nonisolated(unsafe) var registrations: [Source0Registration] = []

    /// - Parameters:
    ///   - order: signalled sources run in ascending order, ties in signal order (S2).
    ///   - label: the name traces and diagnostics use.
    ///   - schedule: called (on the adding thread, no lock held) for each concrete mode it joins (S5).
    ///   - cancel: called for each concrete mode it leaves, by removal or invalidation (S5, S6).
    ///   - perform: called on the loop's thread when the loop services the signalled source.
    public init(order: Int = 0, label: String = "source0",
                schedule: (@Sendable (Loop, Loop.Mode) -> Void)? = nil, cancel: (@Sendable (Loop, Loop.Mode) -> Void)? = nil,
                perform: @escaping @Sendable () -> Void) {
        self.order = order
        self.label = label
        self.scheduleCallout = schedule
        self.cancelCallout = cancel
        self.perform = perform
    }

    /// Marks the source signalled (S1). Thread-safe; ignored when invalid; no wake-up.
    public func signal() {
        if InputReporting.isActive { for loop in loops { loop.reportInput(.signal, label: label) } }
        // The registrations are lent, not retained: `registrations` (mutable access: not
        // retained around the walk) keeps them.
        core.lock.withLock {
            guard core.valid && signalStamp.load(ordering: .relaxed) == 0 else { return }
            signalStamp.store(ProcessCounters.signalStamp(), ordering: .releasing)
            registrations.withUnsafeMutableBufferPointer { list in
                for index in list.indices {
                    Unmanaged.passUnretained(list[index])._withUnsafeGuaranteedRef { $0.enqueue() }
                }
            }
        }
    }

    /// Whether the source is signalled and not yet performed.
    public var isSignalled: Bool { signalStamp.load(ordering: .acquiring) != 0 }

    public var isValid: Bool { core.isValid }

    /// Clears valid and signalled and removes the source from every loop and mode, calling
    /// `cancel` for each mode (S6).
    public func invalidate() {
        let loops = core.invalidate { () -> [Loop] in
            signalStamp.store(0, ordering: .releasing)
            return homes.compactMap(\.loop)
        }
        for loop in loops ?? [] { loop.purgeItem(self) }
    }
}
