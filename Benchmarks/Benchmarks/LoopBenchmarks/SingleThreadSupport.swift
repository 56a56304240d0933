import Benchmark
import CoreFoundation
import Foundation
import RunLoopCore

/// Counts the callouts of the single-thread benchmarks. A global, so the callout closures
/// capture nothing: a capture would add a context allocation to both sides of a comparison.
/// Only the benchmark runner's thread touches it.
nonisolated(unsafe) var calloutCount = 0
/// Counts the hook callouts (observers) of the same benchmarks, for the same reason a global.
nonisolated(unsafe) var hookCount = 0

/// Passes run before the measured span, so first-use growth of buffers is not counted.
let warmUpPasses = 32

/// Runs `pass` `warmUpPasses` times, then `benchmark.scaledIterations` times inside the measured
/// span, and fails the benchmark unless every measured pass made exactly one callout and
/// `hooksPerPass` hook callouts.
func measurePasses(_ benchmark: Benchmark, _ what: String, hooksPerPass: Int = -1, _ pass: () -> Void) {
    for _ in 0..<warmUpPasses { pass() }
    calloutCount = 0
    hookCount = 0
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations { pass() }
    benchmark.stopMeasurement()
    let expected = benchmark.scaledIterations.count
    if calloutCount != expected {
        benchmark.error("\(what): \(calloutCount) callouts in \(expected) passes, expected one per pass")
    }
    if hooksPerPass >= 0 && hookCount != expected * hooksPerPass {
        benchmark.error("\(what): \(hookCount) hook callouts in \(expected) passes, expected \(hooksPerPass) per pass")
    }
}

/// The activities of hook `index` of a set called once per pass: half before the timers, half
/// before the sources, as libuv's prepare and check handles run before and after its poll.
func oncePerPassActivity(_ index: Int) -> Loop.Activity {
    index % 2 == 0 ? .beforeTimers : .beforeSources
}

/// `count` observers on `loop`'s default mode: for every activity, or (`oncePerPass`) each for
/// one activity a polling pass reaches once. Each call bumps `hookCount`.
func installLoopHooks(_ count: Int, oncePerPass: Bool, on loop: Loop) -> [LoopObserver] {
    let observers = (0..<count).map { index in
        LoopObserver(activities: oncePerPass ? oncePerPassActivity(index) : .allActivities, label: "bench") { _, _ in
            hookCount &+= 1
        }
    }
    for observer in observers { loop.add(observer, mode: .default) }
    return observers
}

func removeLoopHooks(_ observers: [LoopObserver], from loop: Loop) {
    for observer in observers {
        loop.remove(observer, mode: .default)
        observer.invalidate()
    }
}

/// The same hooks on CFRunLoop's current loop, default mode.
func installCFHooks(_ count: Int, oncePerPass: Bool) -> [CFRunLoopObserver] {
    let runLoop = CFRunLoopGetCurrent()
    let observers = (0..<count).map { index in
        let activities: CFRunLoopActivity = oncePerPass
            ? (index % 2 == 0 ? .beforeTimers : .beforeSources) : .allActivities
        return CFRunLoopObserverCreateWithHandler(kCFAllocatorDefault, activities.rawValue, true, 0) { _, _ in
            hookCount &+= 1
        }!
    }
    for observer in observers { CFRunLoopAddObserver(runLoop, observer, kCFRunLoopDefaultMode) }
    return observers
}

func removeCFHooks(_ observers: [CFRunLoopObserver]) {
    let runLoop = CFRunLoopGetCurrent()
    for observer in observers {
        CFRunLoopRemoveObserver(runLoop, observer, kCFRunLoopDefaultMode)
        CFRunLoopObserverInvalidate(observer)
    }
}
