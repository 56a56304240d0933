// The cross-thread round trip against its eventfd floor (issue 12, item 3: ≤ 1.1×), timed in
// pairs of chunks milliseconds apart, so that the host's slow periods (seconds long, see
// Benchmarks/NOTES.md "Loops on two CPUs") cannot decide the ratio, as they can between
// package-benchmark rows run seconds apart.
//
// A runner thread pinned to CPU 0 makes chunks of round trips, alternately through the floor
// (an eventfd a responder waits for in epoll_wait) and through a loop (a source0 signalled and
// the loop woken), in both orders; both responders are pinned to CPU 0 too. Each round gives one
// ratio, loop chunk ÷ floor chunk; the table reports the median and quartiles of those ratios.
//
//   round-trip-pairs [rounds] [round trips per chunk]      (default 200 rounds × 400)

import BenchPasses
import CBenchSupport
import Glibc

/// ns per round trip of `count` round trips through `peer`.
func timedRoundTrips(_ peer: any RoundTripPeer, _ count: Int) -> Double {
    let start = monotonicNanoseconds()
    for _ in 0..<count { peer.roundTrip() }
    return Double(monotonicNanoseconds() - start) / Double(count)
}

let arguments = Array(CommandLine.arguments.dropFirst())
let rounds = arguments.count > 0 ? Int(arguments[0]) ?? 200 : 200
let perChunk = arguments.count > 1 ? Int(arguments[1]) ?? 400 : 400

/// The runner: a pthread pinned to `roundTripCPU`, as the responders are.
func measure(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard bench_pin_current_thread(roundTripCPU) == 0, bench_current_cpu() == roundTripCPU else {
        fatalError("round-trip-pairs: could not pin the runner to CPU \(roundTripCPU)")
    }
    let floor = EventfdPingPong(), loop = LoopRoundTrip()
    floor.start()
    loop.start()
    for _ in 0..<warmUpRoundTrips {
        floor.roundTrip()
        loop.roundTrip()
    }
    let pairs = PairedChunks(rounds: rounds, baseline: { timedRoundTrips(floor, perChunk) },
                             measured: { timedRoundTrips(loop, perChunk) })
    loop.stop()
    floor.stop()
    print("""
        | cross-thread round trip, both threads on CPU \(roundTripCPU) (\(rounds) rounds × 2 chunks of \(perChunk)) | eventfd floor, ns (median) | Loop, ns (median) | paired ratio, median | 25th–75th percentile |
        |---|---:|---:|---:|---:|
        | Loop ÷ eventfd ping-pong via epoll | \(pairs.tableCells) |
        """)
    return nil
}

var runner = pthread_t()
let created = pthread_create(&runner, nil, measure, nil)
guard created == 0 else { fatalError("round-trip-pairs: pthread_create failed: \(created)") }
pthread_join(runner, nil)
