import Benchmark
import CoreFoundation
import Foundation
import RunLoopCore

// Same-thread source0 delivery and a due timer, each fired by one polling pass.

func registerSourceBenchmarks() {
    Benchmark("source0 signal → perform · Loop") { benchmark in
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
    Benchmark("source0 signal → perform · CFRunLoop") { benchmark in
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
}

/// A repeating timer whose 1 ns interval makes it due again on every pass.
let alwaysDueInterval = 1e-9

func registerTimerBenchmarks() {
    Benchmark("due timer fires · Loop") { benchmark in
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
    Benchmark("due timer fires · CFRunLoop") { benchmark in
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
}
