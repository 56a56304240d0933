import Benchmark
import BenchPasses
import CFPasses
import CGLibPeer
import CLibuvPeer
import CoreFoundation
import Foundation
import RunLoopCore

// A polling pass that makes one callout, with 0, 2 and 8 hooks. The callout is a block the caller
// posts before each pass on Loop, CFRunLoop and Foundation's RunLoop, and a standing idle handle
// (libuv) or idle source (GLib) that the caller does not post: the peers do less here than ours.
// Hooks come in two works, each equal on every side that runs it:
//   "N hooks"                          observers for every activity, on Loop and CFRunLoop (each
//                                      called 4 times per pass: entry, before timers, before
//                                      sources, exit);
//   "N hooks, each called once per pass"  half before-timers, half before-sources observers on Loop
//                                      and CFRunLoop; half uv_prepare_t, half uv_check_t on libuv;
//                                      half prepare-only, half check-only GSources on GLib.
// Foundation's RunLoop has no observer API and SwiftNIO no hook API, so they appear with 0 hooks
// only; SwiftNIO has no pass either (its row is a chain of `execute` hops, not the same work).
// CF's side needs Foundation imported to link CoreFoundation on Linux.

/// The hook counts measured.
let hookCounts = [0, 2, 8]

/// The work's name for `hooks` hooks, for every activity or each called once per pass.
func pollingWork(hooks: Int, oncePerPass: Bool) -> String {
    "polling pass + 1 callout, \(hooks) hooks" + (oncePerPass && hooks > 0 ? ", each called once per pass" : "")
}

func registerPollingPassBenchmarks() {
    for hooks in hookCounts {
        for oncePerPass in hooks == 0 ? [false] : [false, true] {
            registerPollingPass(hooks: hooks, oncePerPass: oncePerPass)
        }
    }
    Benchmark("\(pollingWork(hooks: 0, oncePerPass: false)) · Foundation RunLoop") { benchmark in
        let runLoop = RunLoop.current
        measurePasses(benchmark, "Foundation RunLoop polling pass") {
            runLoop.perform { calloutCount &+= 1 }
            _ = runLoop.run(mode: .default, before: .distantPast)
        }
    }
    registerNIOHopBenchmark(work: pollingWork(hooks: 0, oncePerPass: false))
}

func registerPollingPass(hooks: Int, oncePerPass: Bool) {
    let work = pollingWork(hooks: hooks, oncePerPass: oncePerPass)
    let callsPerHook = oncePerPass ? 1 : 4
    Benchmark("\(work) · Loop") { benchmark in
        let loop = Loop.current
        let installed = installLoopHooks(hooks, oncePerPass: oncePerPass, on: loop) { hookCount &+= 1 }
        measurePasses(benchmark, "Loop polling pass", hooksPerPass: hooks * callsPerHook) {
            loop.perform(inMode: .default, label: "bench") { calloutCount &+= 1 }
            loop.run(mode: .default, timeout: 0)
        }
        removeLoopHooks(installed, from: loop)
    }
    Benchmark("\(work) · CFRunLoop") { benchmark in
        let runLoop = CFRunLoopGetCurrent()
        let mode = kCFRunLoopDefaultMode
        let installed = installCFHooks(hooks, oncePerPass: oncePerPass) { hookCount &+= 1 }
        measurePasses(benchmark, "CFRunLoop polling pass", hooksPerPass: hooks * callsPerHook) {
            CFRunLoopPerformBlock(runLoop, mode) { calloutCount &+= 1 }
            _ = CFRunLoopRunInMode(mode, 0, false)
        }
        removeCFHooks(installed)
    }
    // libuv's and GLib's hooks are each called once per pass.
    guard oncePerPass || hooks == 0 else { return }
    Benchmark("\(work) · libuv") { benchmark in
        measureCPasses(
            benchmark, "libuv polling pass", hooksPerPass: hooks,
            create: { bench_uv_polling_create(Int32(hooks)) },
            passes: { bench_uv_passes($0, $1) },
            hookCalls: { bench_uv_hook_calls($0) },
            destroy: { bench_uv_destroy($0) }
        )
    }
    Benchmark("\(work) · GLib") { benchmark in
        measureCPasses(
            benchmark, "GLib polling pass", hooksPerPass: hooks,
            create: { bench_glib_polling_create(Int32(hooks)) },
            passes: { bench_glib_passes($0, $1) },
            hookCalls: { bench_glib_hook_calls($0) },
            destroy: { bench_glib_destroy($0) }
        )
    }
}
