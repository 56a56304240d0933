// The due timer re-armed by the caller against libuv (issue 31, item 2: with 2 hooks ≤ 0.8×
// libuv), timed in pairs of chunks milliseconds apart on one thread pinned to CPU 0: chunks of
// passes through libuv's loop and through a loop of the thread alternate strictly, libuv's first
// and last; each row reports both orders' medians and the worse order's
// (Support/BenchPasses/PairedChunks.swift).
//
//   due-timer-pairs [rounds] [passes per chunk]      (default 200 rounds of 20,000)

import BenchPasses
import CBenchSupport
import Glibc

let arguments = Array(CommandLine.arguments.dropFirst())
let rounds = arguments.count > 0 ? Int(arguments[0]) ?? 200 : 200
let passes = arguments.count > 1 ? Int(arguments[1]) ?? 20_000 : 20_000


/// The measuring thread: a pthread pinned to CPU 0, so `Loop.current` is a loop of its own
/// thread, not `Loop.main`.
func measureAll(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard bench_pin_current_thread(0) == 0 else { fatalError("due-timer-pairs: could not pin to CPU 0") }
    var rows: [String] = []
    for hooks in [0, 2] {
        guard let loop = loopDueTimerRunner(hooks: hooks), let libuv = libuvDueTimerRunner(hooks: hooks) else {
            fatalError("due-timer-pairs: set-up failed with \(hooks) hooks")
        }
        _ = loop.timed(passes / 10, tool: "due-timer-pairs", "Loop")
        _ = libuv.timed(passes / 10, tool: "due-timer-pairs", "libuv")
        let pairs = PairedChunks(rounds: rounds, baseline: { libuv.timed(passes, tool: "due-timer-pairs", "libuv") },
                                 measured: { loop.timed(passes, tool: "due-timer-pairs", "Loop") })
        loop.tearDown()
        libuv.tearDown()
        let hookText = hooks == 0 ? "0 hooks" : "\(hooks) hooks, each called once per pass"
        rows.append("| due timer re-armed by the caller, \(hookText): Loop ÷ libuv | \(pairs.tableCells) |")
    }
    print(PairedChunks.header("work, one thread on CPU 0 (\(PairedChunks.schedule(rounds: rounds, chunksOf: "\(passes) passes")))",
                              baseline: "libuv", measured: "Loop"))
    print(rows.joined(separator: "\n"))
    return nil
}

var measuring = pthread_t()
let created = pthread_create(&measuring, nil, measureAll, nil)
guard created == 0 else { fatalError("due-timer-pairs: pthread_create failed: \(created)") }
pthread_join(measuring, nil)
