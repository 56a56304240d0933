import Benchmark
import CoreFoundation
import Foundation
import RunLoopCore

// A polling pass that runs one performed block, with 0, 2 and 8 observers for every activity.
// CF's side needs Foundation imported to link CoreFoundation on Linux.

func registerPollingPassBenchmarks() {
    for observers in [0, 2, 8] {
        Benchmark("polling pass + 1 block, \(observers) observers · Loop") { benchmark in
            let loop = Loop.current
            let installed = (0..<observers).map { _ in
                LoopObserver(activities: .allActivities, label: "bench") { _, _ in }
            }
            for observer in installed { loop.add(observer, mode: .default) }
            measurePasses(benchmark, "Loop polling pass") {
                loop.perform(inMode: .default, label: "bench") { calloutCount &+= 1 }
                loop.run(mode: .default, timeout: 0)
            }
            for observer in installed {
                loop.remove(observer, mode: .default)
                observer.invalidate()
            }
        }
        Benchmark("polling pass + 1 block, \(observers) observers · CFRunLoop") { benchmark in
            let runLoop = CFRunLoopGetCurrent()
            let mode = kCFRunLoopDefaultMode
            let installed = (0..<observers).map { _ in
                CFRunLoopObserverCreateWithHandler(
                    kCFAllocatorDefault, CFRunLoopActivity.allActivities.rawValue, true, 0
                ) { _, _ in }
            }
            for observer in installed { CFRunLoopAddObserver(runLoop, observer, mode) }
            measurePasses(benchmark, "CFRunLoop polling pass") {
                CFRunLoopPerformBlock(runLoop, mode) { calloutCount &+= 1 }
                _ = CFRunLoopRunInMode(mode, 0, false)
            }
            for observer in installed {
                CFRunLoopRemoveObserver(runLoop, observer, mode)
                CFRunLoopObserverInvalidate(observer)
            }
        }
    }
}
