import CRunLoopShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Items whose callouts are not `Sendable` and stay on the thread that made them. The plain
// initialisers take `sending` closures (nothing else may still reach what they capture); these
// take any closure, made on the loop's own thread (checked), and check at every callout that
// it runs there, as `performOnOwnerThread` does for blocks. For main-actor state on
// `Loop.main`, use the `onMainActor:` initialisers instead.

extension LoopObserver {
    /// An observer whose callout may capture state of the loop's own thread (a class that
    /// installs it and keeps a reference to what the callout touches). Make it on `loop`'s
    /// thread and add it to `loop`: a callout on any other thread stops the process with a
    /// message naming the observer and both threads.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// final class Counts { var exits = 0 }               // not Sendable
    /// let counts = Counts()
    /// let observer = LoopObserver(activities: .exit, onOwnerThreadOf: loop) { _, _ in counts.exits += 1 }
    /// loop.add(observer, mode: .default)
    /// loop.add(LoopSource {}, mode: .default)
    /// loop.run(mode: .default, timeout: 0)
    /// print(counts.exits)                                 // still usable here: same thread
    /// ```
    public convenience init(activities: Loop.Activity, repeats: Bool = true, order: Int = 0, label: String = "observer",
                            onOwnerThreadOf loop: Loop, _ callout: @escaping (LoopObserver, Loop.Activity) -> Void) {
        self.init(activities: activities, repeats: repeats, order: order, label: label,
                  loop.ownerThreadCallout("LoopObserver '\(label)'", callout))
    }
}

extension LoopTimer {
    /// A timer first firing `delay` after `loop.clock.now`, whose callout may capture state of
    /// the loop's own thread. Make it on `loop`'s thread and add it to `loop`: a callout on any
    /// other thread stops the process.
    public convenience init(after delay: Duration, interval: Duration = .zero, tolerance: Duration = .zero,
                            label: String = "timer", onOwnerThreadOf loop: Loop,
                            _ callout: @escaping (LoopTimer) -> Void) throws(LoopError) {
        try self.init(after: delay, clock: loop.clock, interval: interval, tolerance: tolerance, label: label,
                      loop.ownerThreadCallout("LoopTimer '\(label)'", callout))
    }
}

extension LoopFileSource {
    /// A file source whose handler may capture state of the loop's own thread (a connection
    /// object that owns the source). Make it on `loop`'s thread and add it to `loop`: a
    /// callout on any other thread stops the process.
    public convenience init(fd: Int32, events: Events, order: Int = 0, label: String = "fd",
                            onOwnerThreadOf loop: Loop, handler: @escaping (Events) -> Void) {
        self.init(fd: fd, events: events, order: order, label: label,
                  handler: loop.ownerThreadCallout("LoopFileSource '\(label)'", handler))
    }
}

extension LoopPortSource {
    /// A port whose handler may capture state of the loop's own thread (any thread may still
    /// send). Make it on `loop`'s thread and add it to `loop`: a callout on any other thread
    /// stops the process.
    public convenience init(order: Int = 0, label: String = "source1", capacity: Int = LoopPortSource.defaultCapacity, messagesPerPass: Int = 1,
                            onOwnerThreadOf loop: Loop, handler: @escaping (Message) -> Void) throws(LoopError) {
        try self.init(order: order, label: label, capacity: capacity, messagesPerPass: messagesPerPass,
                      handler: loop.ownerThreadCallout("LoopPortSource '\(label)'", handler))
    }
}

extension LoopSource {
    /// A version-0 source whose perform may capture state of the loop's own thread. Make it on
    /// `loop`'s thread and add it to `loop` only: a perform on any other thread (another loop
    /// holding the source) stops the process.
    public convenience init(order: Int = 0, label: String = "source0", onOwnerThreadOf loop: Loop,
                            perform: @escaping () -> Void) {
        self.init(order: order, label: label, perform: loop.ownerThreadCallout("LoopSource '\(label)'", perform))
    }
}

extension Loop {
    /// Wraps a closure that is not `Sendable` as a callout for an item of this loop, for the
    /// shapes the `onOwnerThreadOf:` initialisers do not cover (a timer in seconds, a timer
    /// at a date). Call it on the loop's thread (checked); the returned closure checks at every
    /// call that it runs there, so the item must be added to this loop only.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// var fired = 0                                      // a local of the loop's thread
    /// let timer = try LoopTimer(fireAt: loop.clock.now, label: "once", loop.ownerThreadCallout { _ in fired += 1 })
    /// loop.add(timer, mode: .default)
    /// ```
    public func ownerThreadCallout<each Argument>(_ label: String = "callout",
                                                  _ body: @escaping (repeat each Argument) -> Void)
        -> @Sendable (repeat each Argument) -> Void {
        let checked = OwnerThreadCallout(label, loop: self, body)
        return { (argument: repeat each Argument) in checked(repeat each argument) }
    }
}

/// A callout that is not `Sendable`, made on a loop's thread and called only there.
/// `@unchecked Sendable`: made on the owner thread (checked) and each call checks it runs
/// there, so the closure never runs concurrently with its maker.
struct OwnerThreadCallout<each Argument>: @unchecked Sendable {
    private let body: (repeat each Argument) -> Void
    private let what: String
    private let owner: pthread_t
    private let ownerTID: Int64

    init(_ what: String, loop: Loop, _ body: @escaping (repeat each Argument) -> Void) {
        loop.preconditionOnOwnerThread("\(what) (an owner-thread callout)")
        self.body = body
        self.what = what
        self.owner = loop.owner
        self.ownerTID = loop.ownerTID
    }

    func callAsFunction(_ argument: repeat each Argument) {
        guard pthread_equal(pthread_self(), owner) != 0 else {
            preconditionFailure("\(what) was made for the loop of thread \(ownerTID) but was called on thread \(rlk_gettid()) '\(Loop.threadName(pthread_self()))'; add it to that loop only")
        }
        body(repeat each argument)
    }
}
