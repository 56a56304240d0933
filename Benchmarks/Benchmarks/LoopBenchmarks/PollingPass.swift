import Benchmark
import CGLibPeer
import CLibuvPeer
import CoreFoundation
import Foundation
import RunLoopCore

// A polling pass that makes one callout, with 0, 2 and 8 hooks: observers for every activity on
// `Loop` and CFRunLoop, uv_prepare_t/uv_check_t handles (half each) on libuv, custom GSources
// whose prepare and check run on every pass on GLib. The callout is a performed block (Loop,
// CFRunLoop, Foundation RunLoop), an idle handle (libuv) or an idle source (GLib). Foundation's
// RunLoop has no observer API and SwiftNIO no hook API, so they appear with 0 hooks only.
// CF's side needs Foundation imported to link CoreFoundation on Linux.

/// The hook counts measured.
let hookCounts = [0, 2, 8]

func registerPollingPassBenchmarks() {
    for hooks in hookCounts {
        let work = "polling pass + 1 callout, \(hooks) hooks"
        Benchmark("\(work) · Loop") { benchmark in
            let loop = Loop.current
            let installed = (0..<hooks).map { _ in
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
        Benchmark("\(work) · CFRunLoop") { benchmark in
            let runLoop = CFRunLoopGetCurrent()
            let mode = kCFRunLoopDefaultMode
            let installed = (0..<hooks).map { _ in
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
        Benchmark("\(work) · libuv") { benchmark in
            measureCPasses(
                benchmark, "libuv polling pass",
                create: { bench_uv_polling_create(Int32(hooks)) },
                passes: { bench_uv_passes($0, $1) },
                destroy: { bench_uv_destroy($0) }
            )
        }
        Benchmark("\(work) · GLib") { benchmark in
            measureCPasses(
                benchmark, "GLib polling pass",
                create: { bench_glib_polling_create(Int32(hooks)) },
                passes: { bench_glib_passes($0, $1) },
                destroy: { bench_glib_destroy($0) }
            )
        }
    }
    Benchmark("polling pass + 1 callout, 0 hooks · Foundation RunLoop") { benchmark in
        let runLoop = RunLoop.current
        measurePasses(benchmark, "Foundation RunLoop polling pass") {
            runLoop.perform { calloutCount &+= 1 }
            _ = runLoop.run(mode: .default, before: .distantPast)
        }
    }
    registerNIOHopBenchmark(work: "polling pass + 1 callout, 0 hooks")
}
