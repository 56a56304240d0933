// Executor hops onto a loop against hops onto a SwiftNIO event loop (issue 14's target: a hop
// onto a loop costs no more than one onto SwiftNIO), timed in pairs of chunks milliseconds apart
// so that the host's slow periods, seconds long, cannot decide the ratio as they can between
// package-benchmark rows run seconds apart (Benchmarks/NOTES.md, "Loops on two CPUs").
//
// A task on the global executor makes chunks of the same work, alternately on an actor whose
// executor is a LoopThread's loop and on one whose executor is a SwiftNIO event loop, in both
// orders. The process runs under `taskset -c 0`, so every thread shares CPU 0, as in
// LoopBenchmarks' executor rows. The works are those rows':
//   executor hop   `await target.hop()` from a default actor (`HopRunner`): onto the executor's
//                  thread and back to the global one
//   yield job      inside the actor, `Task.yield()` then an isolated statement: out to the
//                  global executor and back onto the executor's thread
//   task chain     inside the actor, each task creates the next (`Task { }` inherits the
//                  isolation): a job enqueued on the executor from its own thread
//
//   executor-pairs [rounds] [operations per chunk] [executor CPU]   (default 200 rounds × 200)
//
// With an executor CPU (1 on a two-CPU machine), both executors' threads are pinned to it while
// the caller's task stays on the CPU the process runs on: each hop crosses CPUs (issue 26).

import BenchPasses
import ExecutorPeers

let arguments = Array(CommandLine.arguments.dropFirst())
let rounds = arguments.count > 0 ? Int(arguments[0]) ?? 200 : 200
let perChunk = arguments.count > 1 ? Int(arguments[1]) ?? 200 : 200
let executorCPU: Int32? = arguments.count > 2 ? Int32(arguments[2]) : nil

/// One work of the table: its row name and `count` operations on `target`.
struct ExecutorWork: Sendable {
    let name: String
    let run: @Sendable (HopTarget, Int) async -> Void
}

let works = [
    ExecutorWork(name: "executor hop: await an actor on it, from a task") { target, count in
        await HopRunner().hops(to: target, count)
    },
    ExecutorWork(name: "job on the executor: Task.yield inside an actor on it") { target, count in
        await target.yields(count)
    },
    ExecutorWork(name: "job from the executor's own thread: a task on an actor on it creates the next") { target, count in
        await target.taskChain(count)
    },
]

/// ns per operation of `count` operations of `work` on `target`.
func timed(_ work: ExecutorWork, on target: HopTarget, _ count: Int) async -> Double {
    let start = monotonicNanoseconds()
    await work.run(target, count)
    return Double(monotonicNanoseconds() - start) / Double(count)
}

/// The paired chunks of `work`: SwiftNIO's actor is the baseline, the loop's the measured one.
func pairs(of work: ExecutorWork) async -> PairedChunks {
    let loopPeer = LoopHopPeer(cpu: executorCPU), nioPeer = NIOHopPeer(cpu: executorCPU)
    let onLoop = loopPeer.start(), onNIO = nioPeer.start()
    defer {
        loopPeer.stop()
        nioPeer.stop()
    }
    await work.run(onLoop, warmUpRoundTrips)
    await work.run(onNIO, warmUpRoundTrips)
    // Strictly alternating chunks, SwiftNIO's first and last (PairedChunks).
    var result = PairedChunks()
    result.append(baseline: await timed(work, on: onNIO, perChunk))
    for _ in 0..<rounds {
        result.append(measured: await timed(work, on: onLoop, perChunk))
        result.append(baseline: await timed(work, on: onNIO, perChunk))
    }
    return result
}

let rows = await Task.detached {
    var rows: [String] = []
    for work in works {
        let chunks = await pairs(of: work)
        rows.append("| \(work.name) | \(chunks.tableCells) |")
    }
    return rows
}.value
print("""
    \(PairedChunks.header("work, \(executorCPU.map { "the executors' threads on CPU \($0), the caller's on CPU 0" } ?? "every thread on CPU 0") (\(PairedChunks.schedule(rounds: rounds, chunksOf: "\(perChunk)"))); Loop ÷ SwiftNIO", baseline: "SwiftNIO", measured: "Loop"))
    \(rows.joined(separator: "\n"))
    """)
