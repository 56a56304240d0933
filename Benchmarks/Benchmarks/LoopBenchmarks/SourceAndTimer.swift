import Benchmark
import CGLibPeer
import CLibuvPeer
import CoreFoundation
import Foundation
import RunLoopCore

// Same-thread delivery of a signalled source and a due timer, each fired by one polling pass.
// The signalled source is a version-0 source on `Loop` and CFRunLoop, an idle handle started
// before the pass that stops itself on libuv, and a custom GSource given ready time 0 on GLib.

/// The name of the source work, shared by every peer.
let sourceWork = "signalled source → callout"
/// The name of the timer work, shared by every peer.
let timerWork = "due timer fires"

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
            create: { bench_glib_ready_source_create() },
            passes: { bench_glib_passes($0, $1) },
            destroy: { bench_glib_destroy($0) }
        )
    }
}

/// A repeating timer whose 1 ns interval makes it due again on every pass.
let alwaysDueInterval = 1e-9

func registerTimerBenchmarks() {
    Benchmark("\(timerWork) · Loop") { benchmark in
        let loop = Loop.current
        let timer: LoopTimer
        do {
            timer = try LoopTimer(fireAt: loop.clock.now, interval: alwaysDueInterval, label: "bench") { _ in
                calloutCount &+= 1
            }
        } catch {
            benchmark.error("LoopTimer refused its interval: \(error)")
            return
        }
        loop.add(timer, mode: .default)
        measurePasses(benchmark, "Loop due timer") {
            loop.run(mode: .default, timeout: 0)
        }
        loop.remove(timer, mode: .default)
        timer.invalidate()
    }
    Benchmark("\(timerWork) · CFRunLoop") { benchmark in
        let runLoop = CFRunLoopGetCurrent()
        let mode = kCFRunLoopDefaultMode
        let timer = CFRunLoopTimerCreateWithHandler(
            kCFAllocatorDefault, CFAbsoluteTimeGetCurrent(), alwaysDueInterval, 0, 0
        ) { _ in calloutCount &+= 1 }
        CFRunLoopAddTimer(runLoop, timer, mode)
        measurePasses(benchmark, "CFRunLoop due timer") {
            _ = CFRunLoopRunInMode(mode, 0, false)
        }
        CFRunLoopRemoveTimer(runLoop, timer, mode)
        CFRunLoopTimerInvalidate(timer)
    }
    Benchmark("\(timerWork) · Foundation RunLoop") { benchmark in
        let runLoop = RunLoop.current
        let timer = Timer(timeInterval: alwaysDueInterval, repeats: true) { _ in calloutCount &+= 1 }
        runLoop.add(timer, forMode: .default)
        measurePasses(benchmark, "Foundation Timer") {
            _ = runLoop.run(mode: .default, before: .distantPast)
        }
        timer.invalidate()
    }
    Benchmark("\(timerWork) · libuv") { benchmark in
        measureCPasses(
            benchmark, "libuv timer",
            create: { bench_uv_timer_create() },
            passes: { bench_uv_passes($0, $1) },
            destroy: { bench_uv_destroy($0) }
        )
    }
    Benchmark("\(timerWork) · GLib") { benchmark in
        measureCPasses(
            benchmark, "GLib timeout source",
            create: { bench_glib_timer_create() },
            passes: { bench_glib_passes($0, $1) },
            destroy: { bench_glib_destroy($0) }
        )
    }
    registerNIOTimerBenchmark(work: timerWork)
}
