import RunLoopCore
import Transactions

/// The observers an iOS main run loop carries in its common modes, installed with one call:
///
/// | order | activities | label |
/// |---|---|---|
/// | −2147483647 | Entry (0x1) | `_wrapRunLoopWithAutoreleasePoolHandler` (push) |
/// | 0 | BeforeWaiting (0x20) | `_UIGestureRecognizerUpdateObserver` (event hook) |
/// | 1999000 | 0xa0 | `_beforeCACommitHandler` |
/// | 2000000 | 0xa0 | `CA::Transaction::observer_callback` (commit) |
/// | 2001000 | 0xa0 | `_afterCACommitHandler` |
/// | 2147483647 | 0xa0 | `_wrapRunLoopWithAutoreleasePoolHandler` (pop + push / pop) |
///
/// With `pools: .perCallout` the two pool observers are replaced by a pool around every callout,
/// as modern CoreFoundation does.
///
/// ```swift
/// let loop = Loop.current
/// let standard = StandardObservers(installedOn: loop)
/// standard.addEventHandler { print("events delivered") }
/// print(loop.observerDump())
/// loop.run(mode: .default, timeout: 1)
/// ```
public final class StandardObservers {
    /// How objects autoreleased in callouts are drained.
    public enum PoolScheme: Sendable {
        /// Entry push, BeforeWaiting pop + push, Exit pop (iOS ≤ 13 and the published dumps).
        case runLoopObservers
        /// A pool around each callout (CoreFoundation since 2021).
        case perCallout
        /// No pools.
        case none
    }

    /// The pool observers, when `pools == .runLoopObservers`.
    public let pools: LoopAutoreleasePools?
    /// The per-callout pools, when `pools == .perCallout`.
    public let calloutPools: PerCalloutAutoreleasePools?
    /// The commit observer and its two hook points.
    public let commits: LoopCommitObservers
    /// Order 0 on BeforeWaiting: runs the event handlers.
    public let eventObserver: LoopObserver

    private let eventHandlers = EventHandlers()
    private weak var loop: Loop?

    /// Installs the set on `loop` in `modes` (default: its common modes), on the loop's thread.
    /// - Parameters:
    ///   - loop: the loop to install on.
    ///   - modes: the modes every observer joins.
    ///   - pipeline: the commit pipeline to drive; default: this thread's.
    ///   - pools: the pool scheme (default: the two observers).
    ///   - flushIfTooLate: see `LoopCommitObservers`; default true (the budget is the
    ///     pipeline's `tooLateBudget`, one 60 Hz frame unless set).
    public init(installedOn loop: Loop, modes: [Loop.Mode] = [.common], pipeline: CommitPipeline = .current,
                pools: PoolScheme = .runLoopObservers, flushIfTooLate: Bool = true) {
        self.loop = loop
        switch pools {
        case .runLoopObservers:
            self.pools = LoopAutoreleasePools(installedOn: loop, modes: modes)
            calloutPools = nil
        case .perCallout:
            self.pools = nil
            let interceptor = PerCalloutAutoreleasePools()
            calloutPools = interceptor
            loop.addCalloutInterceptor(interceptor)
        case .none:
            self.pools = nil
            calloutPools = nil
        }
        let handlers = eventHandlers
        eventObserver = LoopObserver(
            activities: .beforeWaiting, order: ObserverOrder.eventHook, label: ObserverLabel.eventHook,
            onOwnerThreadOf: loop
        ) { _, _ in
            handlers.run()
        }
        for mode in modes { loop.add(eventObserver, mode: mode) }
        commits = LoopCommitObservers(installedOn: loop, pipeline: pipeline, modes: modes,
                                      flushIfTooLate: flushIfTooLate)
    }

    /// Adds work for the order-0 BeforeWaiting hook (where UIKit updates gesture recognizers).
    public func addEventHandler(_ handler: @escaping () -> Void) { eventHandlers.all.append(handler) }

    /// Removes every observer and interceptor this set installed.
    public func uninstall() {
        pools?.uninstall()
        if let calloutPools { loop?.removeCalloutInterceptor(calloutPools) }
        eventObserver.invalidate()
        commits.uninstall()
    }
}

/// The event hook's work; confined to the loop's thread.
private final class EventHandlers {
    var all: [() -> Void] = []
    func run() { for handler in all { handler() } }
}
