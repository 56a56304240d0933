// The main-thread side of the MainActorOnMainLoop suite (Tests/RunLoopCoreTests): a Swift 6
// main.swift whose main thread runs Loop.main, with `@MainActor` code, `DispatchQueue.main`
// work and loop timers. It keeps its state in top-level variables (main-actor state) and touches
// it from loop callouts, with no `nonisolated(unsafe)`. It prints one line per step, "<step>:
// <what ran, in order>", which the suite compares with CF's order.
//
//   mainactor-probe                  @MainActor jobs go through DispatchQueue.main (the default)
//   mainactor-probe --main-executor  Loop.main is the main actor's executor (SPI, see
//                                    MainLoopExecutorFactory): jobs are block-step callouts
//   mainactor-probe --wrong-thread   a @MainActor callout reached from another loop's thread:
//                                    must stop the process with a message
//   mainactor-probe --perform-off-thread  performOnOwnerThread called off the loop's thread:
//                                    must stop the process with a message
@_spi(ExperimentalCustomExecutors) import RunLoopCore
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--main-executor") {
    Loop.installMainLoopAsMainExecutor()   // checks that MainActor.executor is now Loop.main
}

var trace: [String] = []          // main-actor state, written by the callouts below
var bytesRead = 0

@MainActor func finishStep(_ name: String) {
    print("\(name): \(trace.joined(separator: " "))")
    trace.removeAll()
}

if arguments.contains("--wrong-thread") {
    let worker = LoopThread(name: "not-main")
    let source = LoopSource(label: "misplaced", onMainActor: { trace.append("never") })
    worker.loop.add(source, mode: .default)
    source.signal()
    worker.loop.wakeUp()
    sleep(10)  // the worker stops the process first; if it does not, exit 0 fails the test
    exit(0)
}

if arguments.contains("--perform-off-thread") {
    let worker = LoopThread(name: "owner")
    final class Counter { var value = 0 }   // not Sendable
    let counter = Counter()
    worker.loop.performOnOwnerThread { counter.value += 1 }   // the main thread is not the owner
    exit(0)
}

let loop = Loop.main
let activities = LoopObserver(activities: [.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit],
                              label: "activities", onMainActor: { _, activity in trace.append(activity.shortName) })
loop.add(activities, mode: .default)

// Step "fd": a file source's @MainActor handler counts bytes in a top-level variable.
var ends: [Int32] = [0, 0]
guard pipe(&ends) == 0 else { fatalError("pipe failed") }
let reader = LoopFileSource(fd: ends[0], events: .readable, label: "pipe", onMainActor: { _ in
    var byte: UInt8 = 0
    bytesRead += read(ends[0], &byte, 1)
    trace.append("fd")
})
loop.add(reader, mode: .default)
if case .failure(let failure) = valueOrErrno("write(pipe)", { write(ends[1], "x", 1) }) {   // EINTR retried
    fatalError("writing to the pipe failed: \(failure)")
}
loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true)
loop.remove(reader, mode: .default)
trace.append("bytes=\(bytesRead)")
finishStep("fd")

// Step "order": a timer's callout queues a @MainActor task, DispatchQueue.main work and a
// block. The block runs at the end of the timer's pass (B3); the main queue is then already
// signalled, so the next pass takes the fast path: no BW/AW before the drain (L-a, X4).
// @MainActor jobs are main-queue work by default (FIFO with DispatchQueue.main), block-step
// jobs with --main-executor.
let timer = try LoopTimer(after: .milliseconds(1), clock: loop.clock, label: "timer", onMainActor: { _ in
    trace.append("timer")
    Task { @MainActor in trace.append("actor") }
    DispatchQueue.main.async { MainActor.assumeIsolated { trace.append("queue") } }
    loop.performOnOwnerThread { trace.append("block") }
})
loop.add(timer, mode: .default)
loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true)
finishStep("order")

// Step "997" (swift-testing #997's shape): @MainActor async code awaits a timer that the main
// loop fires.
@MainActor func awaitMainLoopTimer() async -> String {
    await withCheckedContinuation { continuation in
        let fired = try! LoopTimer(after: .milliseconds(2), clock: Loop.main.clock, label: "997", onMainActor: { _ in
            continuation.resume(returning: "timer fired")
        })
        Loop.main.add(fired, mode: .common)
    }
}
Task { @MainActor in
    trace.append(await awaitMainLoopTimer())
    Loop.main.stop()
}
loop.remove(activities, mode: .default)
loop.run()   // CFRunLoopRun (R6): until the task stops it
finishStep("997")
