// The polling pass + 1 callout and its hooks on CFRunLoop (swift-corelibs-foundation's CF), as
// the package-benchmark rows and pass-pairs run them. Foundation is imported so that
// CoreFoundation links on Linux.

import BenchPasses
import CoreFoundation
import Foundation

/// `count` observers on the calling thread's CFRunLoop, default mode: for every activity, or
/// (`oncePerPass`) half before-timers and half before-sources, each called once per polling
/// pass. Each call runs `bump` (inlinable, as `installLoopHooks`, so both sides call it alike).
@inlinable
public func installCFHooks(_ count: Int, oncePerPass: Bool, bump: @escaping @Sendable () -> Void) -> [CFRunLoopObserver] {
    let runLoop = CFRunLoopGetCurrent()
    let observers = (0..<count).map { index in
        let activities: CFRunLoopActivity = oncePerPass
            ? (index % 2 == 0 ? .beforeTimers : .beforeSources) : .allActivities
        return CFRunLoopObserverCreateWithHandler(kCFAllocatorDefault, activities.rawValue, true, 0) { _, _ in
            bump()
        }!
    }
    for observer in observers { CFRunLoopAddObserver(runLoop, observer, kCFRunLoopDefaultMode) }
    return observers
}

/// Removes and invalidates the observers `installCFHooks` added.
@inlinable
public func removeCFHooks(_ observers: [CFRunLoopObserver]) {
    let runLoop = CFRunLoopGetCurrent()
    for observer in observers {
        CFRunLoopRemoveObserver(runLoop, observer, kCFRunLoopDefaultMode)
        CFRunLoopObserverInvalidate(observer)
    }
}

/// The calling thread's CFRunLoop, each pass performing one block (made once, as the loop's
/// side does) and running the default mode with a zero timeout, with `hooks` observers for
/// every activity; `run(n)` traps unless every hook ran 4 times a pass.
public func cfPassRunner(hooks: Int) -> PassRunner {
    let runLoop = CFRunLoopGetCurrent()
    let mode = kCFRunLoopDefaultMode
    let tally = CalloutTally(), hookTally = CalloutTally()
    let bump: @Sendable () -> Void = { tally.count &+= 1 }
    let observers = installCFHooks(hooks, oncePerPass: false) { hookTally.count &+= 1 }
    return PassRunner(run: { passes in
        let before = tally.count, hooksBefore = hookTally.count
        for _ in 0..<passes {
            CFRunLoopPerformBlock(runLoop, mode, bump)
            _ = CFRunLoopRunInMode(mode, 0, false)
        }
        precondition(hookTally.count - hooksBefore == 4 * hooks * passes, "CFRunLoop polling pass: a hook missed a pass")
        return tally.count - before
    }, tearDown: { removeCFHooks(observers) })
}
