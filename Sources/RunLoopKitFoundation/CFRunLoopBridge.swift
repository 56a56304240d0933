// Foundation must be linked for CoreFoundation's symbols on Linux; `import CoreFoundation` alone
// compiles but does not link.
import CoreFoundation
import Foundation
import RunLoopKit

/// Attaches RunLoopKit's pool and commit observers to a real `CFRunLoop` (and so to the
/// Foundation `RunLoop` of the same thread), for code that runs CoreFoundation's loop rather than
/// `Loop`. Install on the run loop's own thread: the pool stack and the pipeline belong to it.
///
/// ```swift
/// import CoreFoundation
/// import RunLoopKit
/// import RunLoopKitFoundation
///
/// let bridge = CFRunLoopBridge(runLoop: CFRunLoopGetCurrent())
/// bridge.installAutoreleasePools()          // −2147483647 Entry / 2147483647 BeforeWaiting|Exit
/// bridge.installCommitObserver(pipeline: .current)   // 2000000 BeforeWaiting|Exit
/// CFRunLoopRunInMode(kCFRunLoopDefaultMode, 1, false)
/// bridge.uninstall()
/// ```
public final class CFRunLoopBridge {
    /// The run loop the observers are added to.
    public let runLoop: CFRunLoop
    /// The mode they are added to (default `kCFRunLoopCommonModes`).
    public let mode: CFRunLoopMode
    /// The observers added so far, in the order they were added.
    public private(set) var observers: [CFRunLoopObserver] = []
    private let pools = AutoreleasePoolStack()

    /// A bridge to `runLoop` that adds nothing until one of the `install` methods is called.
    public init(runLoop: CFRunLoop, mode: CFRunLoopMode = kCFRunLoopCommonModes) {
        self.runLoop = runLoop
        self.mode = mode
    }

    /// Adds the two pool observers: push on Entry (order −2147483647); pop + push on
    /// BeforeWaiting and pop on Exit (order 2147483647).
    public func installAutoreleasePools() {
        let pools = self.pools
        add(activities: Loop.Activity.entry.rawValue, order: ObserverOrder.autoreleasePoolPush) { _ in
            pools.push()
        }
        add(activities: Loop.Activity([.beforeWaiting, .exit]).rawValue, order: ObserverOrder.autoreleasePoolPop) {
            activity in
            if activity == Loop.Activity.beforeWaiting.rawValue { pools.popAndPush() } else { pools.pop() }
        }
    }

    /// Adds the commit observer (order 2000000, BeforeWaiting | Exit) for `pipeline`, and makes
    /// the pipeline wake this run loop when work lands in the next commit.
    public func installCommitObserver(pipeline: CommitPipeline) {
        add(activities: Loop.Activity([.beforeWaiting, .exit]).rawValue, order: ObserverOrder.commit) { activity in
            pipeline.commitIfNeeded(reason: activity == Loop.Activity.exit.rawValue ? .exit : .beforeWaiting)
        }
        let runLoop = self.runLoop
        pipeline.wakeUpHandler = { CFRunLoopWakeUp(runLoop) }
    }

    /// Adds an observer at `order` for the given CF activity bits.
    public func addObserver(activities: UInt32, order: Int, _ callout: @escaping (UInt32) -> Void) {
        add(activities: activities, order: order, callout)
    }

    /// Invalidates every observer this bridge added and pops any pool it still holds.
    public func uninstall() {
        for observer in observers { CFRunLoopObserverInvalidate(observer) }
        observers.removeAll()
        pools.popAll()
    }

    private func add(activities: UInt32, order: Int, _ callout: @escaping (UInt32) -> Void) {
        // CF's block type is `@Sendable`, but CF calls an observer's block only on the thread of
        // its run loop, where the bridge was installed and where the callout's state belongs.
        nonisolated(unsafe) let callout = callout
        guard let observer = CFRunLoopObserverCreateWithHandler(
            kCFAllocatorDefault, CFOptionFlags(activities), true, CFIndex(order),
            { _, activity in callout(UInt32(truncatingIfNeeded: activity.rawValue)) }
        ) else { return }
        CFRunLoopAddObserver(runLoop, observer, mode)
        observers.append(observer)
    }
}

