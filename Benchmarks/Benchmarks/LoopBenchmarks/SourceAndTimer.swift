import Benchmark
import BenchPasses
import CFPasses
import CGLibPeer
import CLibuvPeer
import CoreFoundation
import Foundation
import RunLoopCore

// Same-thread delivery of a signalled source and of a due timer, each fired by one polling pass.
//
// Signalled source: the caller signals, then one pass runs it. A version-0 source on `Loop` and
// CFRunLoop; an idle handle started before the pass that stops itself on libuv; a custom GSource
// given ready time 0 on GLib.
//
// Due timer re-armed by the caller (issue 31): before each pass the caller makes the timer due
// now, then one pass fires it; 0 hooks, or 2 hooks each called once per pass (as in
// PollingPass.swift). No side reads the clock to re-arm:
//   Loop        a repeating timer (interval one hour, so it never comes due by itself),
//               `setNextFireDate(pastDate)` with a date taken before the measured span;
//   CFRunLoop   the same timer, `CFRunLoopTimerSetNextFireDate(timer, pastDate)`;
//   Foundation  a repeating `Timer`, `timer.fireDate = pastDate` (0 hooks only: no observers);
//   libuv       `uv_timer_start(timer, cb, 0, 0)`, due at the loop's cached time;
//   GLib        `g_source_set_ready_time(source, 0)` on a custom source (GLib's timeout sources
//               use this same ready time; GLib sets it itself after each dispatch);
//   SwiftNIO    no pass and no re-arm from outside its thread: a chain of
//               `scheduleTask(in: 0)` hops, each scheduling the next (0 hooks only; not the
//               same work, so it is named apart and gated by nothing).

/// The name of the source work, shared by every peer.
let sourceWork = "signalled source → callout"

/// The timer work's name with `hooks` hooks.
func timerWork(hooks: Int) -> String {
    "due timer re-armed by the caller, \(hooks) hooks" + (hooks > 0 ? ", each called once per pass" : "")
}

/// The hook counts of the timer work: the target is the 2-hook one.
let timerHookCounts = [0, 2]

/// A timer interval long enough that only the caller's re-arm makes the timer due.
let neverDueByItself = 3600.0

func registerSourceBenchmarks() {
    Benchmark("\(sourceWork) · Loop") { benchmark in
        let loop = Loop.current
        let source = LoopSource(label: "bench") { calloutCount &+= 1 }
        loop.add(source, mode: .default)
        measurePasses(benchmark, "Loop source0") {
            source.signal()
            loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true)
        }
        loop.remove(source, mode: .default)
        source.invalidate()
    }
    Benchmark("\(sourceWork) · CFRunLoop") { benchmark in
        let runLoop = CFRunLoopGetCurrent()
        let mode = kCFRunLoopDefaultMode
        var context = CFRunLoopSourceContext()
        context.version = 0
        context.perform = { _ in calloutCount &+= 1 }
        let source = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &context)
        CFRunLoopAddSource(runLoop, source, mode)
        measurePasses(benchmark, "CFRunLoop source0") {
            CFRunLoopSourceSignal(source)
            _ = CFRunLoopRunInMode(mode, 0, true)
        }
        CFRunLoopRemoveSource(runLoop, source, mode)
        CFRunLoopSourceInvalidate(source)
    }
    Benchmark("\(sourceWork) · libuv") { benchmark in
        measureCPasses(
            benchmark, "libuv idle handle",
            create: { bench_uv_idle_create() },
            passes: { bench_uv_passes($0, $1) },
            destroy: { bench_uv_destroy($0) }
        )
    }
    Benchmark("\(sourceWork) · GLib") { benchmark in
        measureCPasses(
            benchmark, "GLib ready source",
            create: { bench_glib_ready_source_create(0) },
            passes: { bench_glib_passes($0, $1) },
            destroy: { bench_glib_destroy($0) }
        )
    }
}

func registerTimerBenchmarks() {
    for hooks in timerHookCounts { registerTimerBenchmarks(hooks: hooks) }
    registerNIOTimerBenchmark(work: timerWork(hooks: 0))
}

func registerTimerBenchmarks(hooks: Int) {
    let work = timerWork(hooks: hooks)
    Benchmark("\(work) · Loop") { benchmark in
        let loop = Loop.current
        let pastDate = loop.clock.now
        let timer: LoopTimer
        do {
            timer = try LoopTimer(fireAt: pastDate, interval: neverDueByItself, label: "bench") { _ in
                calloutCount &+= 1
            }
        } catch {
            benchmark.error("LoopTimer refused its interval: \(error)")
            return
        }
        loop.add(timer, mode: .default)
        let installed = installLoopHooks(hooks, oncePerPass: true, on: loop) { hookCount &+= 1 }
        measurePasses(benchmark, "Loop due timer", hooksPerPass: hooks) {
            timer.setNextFireDate(pastDate)
            loop.run(mode: .default, timeout: 0)
        }
        removeLoopHooks(installed, from: loop)
        loop.remove(timer, mode: .default)
        timer.invalidate()
    }
    Benchmark("\(work) · CFRunLoop") { benchmark in
        let runLoop = CFRunLoopGetCurrent()
        let mode = kCFRunLoopDefaultMode
        let pastDate = CFAbsoluteTimeGetCurrent()
        let timer = CFRunLoopTimerCreateWithHandler(
            kCFAllocatorDefault, pastDate, neverDueByItself, 0, 0
        ) { _ in calloutCount &+= 1 }
        CFRunLoopAddTimer(runLoop, timer, mode)
        let installed = installCFHooks(hooks, oncePerPass: true) { hookCount &+= 1 }
        measurePasses(benchmark, "CFRunLoop due timer", hooksPerPass: hooks) {
            CFRunLoopTimerSetNextFireDate(timer, pastDate)
            _ = CFRunLoopRunInMode(mode, 0, false)
        }
        removeCFHooks(installed)
        CFRunLoopRemoveTimer(runLoop, timer, mode)
        CFRunLoopTimerInvalidate(timer)
    }
    if hooks == 0 {
        Benchmark("\(work) · Foundation RunLoop") { benchmark in
            let runLoop = RunLoop.current
            let pastDate = Date()
            let timer = Timer(fire: pastDate, interval: neverDueByItself, repeats: true) { _ in calloutCount &+= 1 }
            runLoop.add(timer, forMode: .default)
            measurePasses(benchmark, "Foundation Timer") {
                timer.fireDate = pastDate
                _ = runLoop.run(mode: .default, before: .distantPast)
            }
            timer.invalidate()
        }
    }
    Benchmark("\(work) · libuv") { benchmark in
        measureCPasses(
            benchmark, "libuv timer", hooksPerPass: hooks,
            create: { bench_uv_timer_create(Int32(hooks)) },
            passes: { bench_uv_passes($0, $1) },
            hookCalls: { bench_uv_hook_calls($0) },
            destroy: { bench_uv_destroy($0) }
        )
    }
    Benchmark("\(work) · GLib") { benchmark in
        measureCPasses(
            benchmark, "GLib ready-time source", hooksPerPass: hooks,
            create: { bench_glib_ready_source_create(Int32(hooks)) },
            passes: { bench_glib_passes($0, $1) },
            hookCalls: { bench_glib_hook_calls($0) },
            destroy: { bench_glib_destroy($0) }
        )
    }
}
