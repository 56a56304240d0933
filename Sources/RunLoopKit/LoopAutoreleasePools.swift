import Autorelease
import RunLoopCore

/// The classic UIKit pool scheme on a `Loop`: two observers with callout
/// `_wrapRunLoopWithAutoreleasePoolHandler`, one at order −2147483647 on Entry (push) and one at
/// 2147483647 on BeforeWaiting (pop, then push) and Exit (pop). Objects autoreleased during a turn
/// therefore live until the loop is about to sleep, after the commit.
///
/// Nested runs push their own pool on Entry and pop it on Exit, so the pools form a stack that
/// follows the runs. Install it on the loop's own thread.
///
/// ```swift
/// let loop = Loop.current
/// let pools = LoopAutoreleasePools(installedOn: loop)      // common modes
/// loop.add(LoopSource { _ = AutoreleasePool.autorelease(Buffer()) }, mode: .default)
/// loop.run(mode: .default, timeout: 1)
/// pools.uninstall()
/// ```
public final class LoopAutoreleasePools {
    /// The Entry observer (push).
    public let entryObserver: LoopObserver
    /// The BeforeWaiting | Exit observer (pop + push, pop).
    public let exitObserver: LoopObserver
    /// The pools pushed by these observers and not yet popped (one per running nested run).
    public var depth: Int { stack.depth }

    private let stack = AutoreleasePoolStack()

    /// Creates the two observers and adds them to `modes` of `loop` (default: the common modes).
    public init(installedOn loop: Loop, modes: [Loop.Mode] = [.common]) {
        let stack = self.stack
        entryObserver = LoopObserver(
            activities: .entry, order: ObserverOrder.autoreleasePoolPush,
            label: ObserverLabel.autoreleasePool, onOwnerThreadOf: loop
        ) { _, _ in
            stack.push()
        }
        exitObserver = LoopObserver(
            activities: [.beforeWaiting, .exit], order: ObserverOrder.autoreleasePoolPop,
            label: ObserverLabel.autoreleasePool, onOwnerThreadOf: loop
        ) { _, activity in
            if activity == .beforeWaiting { stack.popAndPush() } else { stack.pop() }
        }
        for mode in modes {
            loop.add(entryObserver, mode: mode)
            loop.add(exitObserver, mode: mode)
        }
    }

    /// Removes both observers from the loop and pops any pool they still hold.
    public func uninstall() {
        entryObserver.invalidate()
        exitObserver.invalidate()
        stack.popAll()
    }

    deinit {
        entryObserver.invalidate()
        exitObserver.invalidate()
    }
}

/// Modern CoreFoundation's per-callout pools: every callout of the loop (observers, blocks,
/// sources, timers, the main queue) runs inside its own pool, so an object autoreleased in a
/// callout dies when that callout returns. Use it instead of `LoopAutoreleasePools`, not with it.
///
/// ```swift
/// loop.addCalloutInterceptor(PerCalloutAutoreleasePools())
/// ```
public final class PerCalloutAutoreleasePools: LoopCalloutInterceptor, Sendable {
    /// Made at the first callout and used only inside callouts, so only on the thread of the loop
    /// the interceptor is installed on (a loop calls its interceptors on its own thread).
    nonisolated(unsafe) private var stack: AutoreleasePoolStack?

    public init() {}

    public func willCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        if stack == nil { stack = AutoreleasePoolStack() }
        stack?.push()
    }

    public func didCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        stack?.pop()
    }
}
