// The fresh-object works against the naive Swift pool (issue 31, item 2: a fresh object per
// pool ≤ 1.0× the naive pool in either order), timed in pairs of chunks milliseconds apart on
// one thread pinned to CPU 0, strictly alternating, the naive pool's first and last; each row
// reports both orders' medians and the worse order's (Support/BenchPasses/PairedChunks.swift).
// Both sides' containers exist before the first chunk and both run the same warm-up
// (Works.swift).
//
//   pool-pairs [rounds] [operations per chunk]      (default 400 rounds of 20,000)

import BenchPasses
import CBenchSupport
import Glibc

let arguments = Array(CommandLine.arguments.dropFirst())
let rounds = arguments.count > 0 ? Int(arguments[0]) ?? 400 : 400
let perChunk = arguments.count > 1 ? Int(arguments[1]) ?? 20_000 : 20_000

/// The measuring thread: a pthread pinned to CPU 0, with its own pool. The chunks are written
/// out here rather than through `PairedChunks(rounds:baseline:measured:)` or local functions,
/// so that the naive pool stays a local variable of this function that no closure captures (its
/// fastest form: captured, it moves to a heap box, and its chunks read 29.6 → 43.6 ns).
func measureAll(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard bench_pin_current_thread(0) == 0, bench_current_cpu() == 0 else { fatalError("pool-pairs: could not pin to CPU 0") }
    var naive = NaivePool()
    for _ in 0..<warmUpOperations {
        freshObjectInOwnPool()
        naive.freshObjectInOwnPool()
    }
    thousandFreshObjectsThenPop()
    naive.thousandFreshObjectsThenPop()
    let drains = max(1, perChunk / 1000)
    // Strictly alternating chunks, the naive pool's first and last (PairedChunks): even chunks
    // are the naive pool's, odd ones ours.
    var fresh = PairedChunks(), oneDrain = PairedChunks()
    for chunk in 0...(2 * rounds) {
        let start = monotonicNanoseconds()
        if chunk % 2 == 0 {
            for _ in 0..<perChunk { naive.freshObjectInOwnPool() }
            fresh.append(baseline: Double(monotonicNanoseconds() - start) / Double(perChunk))
        } else {
            for _ in 0..<perChunk { freshObjectInOwnPool() }
            fresh.append(measured: Double(monotonicNanoseconds() - start) / Double(perChunk))
        }
    }
    for chunk in 0...(2 * rounds) {
        let start = monotonicNanoseconds()
        if chunk % 2 == 0 {
            for _ in 0..<drains { naive.thousandFreshObjectsThenPop() }
            oneDrain.append(baseline: Double(monotonicNanoseconds() - start) / Double(drains * 1000))
        } else {
            for _ in 0..<drains { thousandFreshObjectsThenPop() }
            oneDrain.append(measured: Double(monotonicNanoseconds() - start) / Double(drains * 1000))
        }
    }
    print(PairedChunks.header("work, one thread on CPU 0 (\(PairedChunks.schedule(rounds: rounds, chunksOf: "\(perChunk) objects")))",
                              baseline: "naive Swift pool", measured: "Autorelease"))
    print("| fresh object, push + autorelease + pop (dealloc): Autorelease ÷ naive Swift pool | \(fresh.tableCells) |")
    print("| 1000 fresh objects, then one pop (dealloc), per object: Autorelease ÷ naive Swift pool | \(oneDrain.tableCells) |")
    return nil
}

var measuring = pthread_t()
let created = pthread_create(&measuring, nil, measureAll, nil)
guard created == 0 else { fatalError("pool-pairs: pthread_create failed: \(created)") }
pthread_join(measuring, nil)
