import CRunLoopShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Items whose callouts are `@MainActor` code, for `Loop.main`. The plain initialisers take
// `sending` closures, which may not touch main-actor state; these take a `@MainActor` closure
// and check at every callout that it runs on the main thread, so a Swift 6 `main.swift` can keep
// its state in top-level (main-actor) variables and touch it from loop callbacks.

extension LoopFileSource {
    /// A file source whose handler is main-actor code: add it to ``Loop/main`` only (a callout
    /// on any other thread stops the process with a message naming the source).
    ///
    /// ```swift
    /// var lines = 0                           // a top-level variable: main-actor state
    /// var ends: [Int32] = [0, 0]
    /// _ = pipe(&ends)
    /// let reader = LoopFileSource(fd: ends[0], events: .readable, onMainActor: { _ in lines += 1 })
    /// Loop.main.add(reader, mode: .default)
    /// ```
    public convenience init(fd: Int32, events: Events, order: Int = 0, label: String = "fd",
                            onMainActor handler: @escaping @MainActor (Events) -> Void) {
        self.init(fd: fd, events: events, order: order, label: label,
                  handler: mainActorCallout("LoopFileSource '\(label)'", handler))
    }
}

extension LoopObserver {
    /// An observer whose callout is main-actor code: add it to ``Loop/main`` only (a callout on
    /// any other thread stops the process with a message naming the observer).
    ///
    /// ```swift
    /// var waits = 0
    /// let observer = LoopObserver(activities: .beforeWaiting, onMainActor: { _, _ in waits += 1 })
    /// Loop.main.add(observer, mode: .common)
    /// ```
    public convenience init(activities: Loop.Activity, repeats: Bool = true, order: Int = 0, label: String = "observer",
                            onMainActor callout: @escaping @MainActor (LoopObserver, Loop.Activity) -> Void) {
        let checked = mainActorCallout("LoopObserver '\(label)'") { (pair: ObserverCall) in callout(pair.observer, pair.activity) }
        self.init(activities: activities, repeats: repeats, order: order, label: label) { observer, activity in
            checked(ObserverCall(observer: observer, activity: activity))
        }
    }
}

extension LoopTimer {
    /// A timer whose callout is main-actor code, first firing `delay` after `clock.now`: add
    /// it to ``Loop/main`` only (a callout on any other thread stops the process).
    ///
    /// ```swift
    /// var ticks = 0
    /// let tick = try LoopTimer(after: .milliseconds(10), clock: Loop.main.clock, onMainActor: { _ in ticks += 1 })
    /// Loop.main.add(tick, mode: .common)
    /// ```
    public convenience init(after delay: Duration, clock: any LoopClock, interval: Duration = .zero,
                            tolerance: Duration = .zero, label: String = "timer",
                            onMainActor callout: @escaping @MainActor (LoopTimer) -> Void) throws(LoopError) {
        try self.init(after: delay, clock: clock, interval: interval, tolerance: tolerance, label: label,
                      mainActorCallout("LoopTimer '\(label)'", callout))
    }
}

extension LoopSource {
    /// A version-0 source whose perform is main-actor code: add it to ``Loop/main`` only (a
    /// perform on any other thread stops the process).
    ///
    /// ```swift
    /// var performed = 0
    /// let source = LoopSource(label: "refresh", onMainActor: { performed += 1 })
    /// Loop.main.add(source, mode: .default)
    /// ```
    public convenience init(order: Int = 0, label: String = "source0",
                            onMainActor perform: @escaping @MainActor () -> Void) {
        let checked = mainActorCallout("LoopSource '\(label)'") { (_: Void) in perform() }
        self.init(order: order, label: label, perform: { checked(()) })
    }
}

/// An observer callout's arguments, as one value.
private struct ObserverCall: Sendable {
    let observer: LoopObserver
    let activity: Loop.Activity
}

/// Wraps main-actor code as a plain callout that checks, each time, that it runs on the main
/// thread (the main actor's thread; with ``MainLoopExecutorFactory`` its executor is
/// ``Loop/main``), then enters the main actor's isolation.
private func mainActorCallout<Argument: Sendable>(_ what: String, _ body: @escaping @MainActor (Argument) -> Void)
    -> @Sendable (Argument) -> Void {
    { argument in
        guard rlk_is_main_thread() == 1 else {
            preconditionFailure("\(what) has a @MainActor callout but was called on thread \(rlk_gettid()) '\(Loop.threadName(pthread_self()))'; add it to Loop.main only")
        }
        MainActor.assumeIsolated { body(argument) }
    }
}
