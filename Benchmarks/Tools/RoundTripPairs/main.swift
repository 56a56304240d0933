// The cross-thread round trip against every peer that does the same work fastest (issue 31,
// item 2: ≤ 1.0× the fastest of libuv, GLib and the bare-read floor; issue 12: ≤ 1.1× the epoll
// floor), timed in pairs of chunks milliseconds apart, so that the host's slow periods (seconds
// long, see Benchmarks/NOTES.md "Loops on two CPUs") cannot decide a ratio, as they can between
// package-benchmark rows run seconds apart.
//
// A runner thread pinned to CPU 0 makes chunks of round trips, alternately through a peer and
// through a loop (a source0 signalled and the loop woken), strictly alternating, the peer's
// first and last; every responder is pinned to CPU 0 too. Each loop chunk gives two ratios, over
// the peer chunk before it and over the one after it; each row reports the median of each
// order's ratios and the worse order's median with its quartiles. The last row repeats the peer with the highest ratio: the fastest
// peer of the run, the bar of the target.
//
//   round-trip-pairs [rounds] [round trips per chunk]      (default 200 rounds × 400)
//   round-trip-pairs --trips PEER N     N round trips through one responder only (Loop, or a
//                                       peer's row name after "Loop ÷ "), for `strace -f -c` and
//                                       callgrind (Scripts/round-trip-syscalls.sh)

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
let tripsOnly = arguments.first == "--trips"
let rounds = !tripsOnly && arguments.count > 0 ? Int(arguments[0]) ?? 200 : 200
let perChunk = !tripsOnly && arguments.count > 1 ? Int(arguments[1]) ?? 400 : 400

/// The peers, by the row name Scripts/check and thresholds.json use.
let peers: [(row: String, peer: any RoundTripPeer)] = [
    ("Loop ÷ eventfd ping-pong via epoll", EventfdPingPong()),
    ("Loop ÷ eventfd ping-pong, bare read", BareReadPingPong()),
    ("Loop ÷ libuv", LibuvRoundTrip()),
    ("Loop ÷ GLib", GLibRoundTrip()),
]

/// `--trips PEER N`: N round trips through one responder, nothing else.
func tripsThroughOne() {
    guard arguments.count == 3, let count = Int(arguments[2]) else {
        fatalError("round-trip-pairs: --trips PEER N (PEER: Loop, or one of \(peers.map { $0.row.dropFirst("Loop ÷ ".count) }))")
    }
    let name = arguments[1]
    let chosen: (any RoundTripPeer)? = name == "Loop" ? LoopRoundTrip()
        : peers.first { $0.row.dropFirst("Loop ÷ ".count) == name }?.peer
    guard let peer = chosen else { fatalError("round-trip-pairs: no responder named '\(name)'") }
    peer.start()
    for _ in 0..<count { peer.roundTrip() }
    peer.stop()
}

/// The runner: a pthread pinned to `roundTripCPU`, as the responders are.
func measure(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard bench_pin_current_thread(roundTripCPU) == 0, bench_current_cpu() == roundTripCPU else {
        fatalError("round-trip-pairs: could not pin the runner to CPU \(roundTripCPU)")
    }
    if tripsOnly {
        tripsThroughOne()
        return nil
    }
    let loop = LoopRoundTrip()
    loop.start()
    for _ in 0..<warmUpRoundTrips { loop.roundTrip() }
    var rows: [(row: String, pairs: PairedChunks)] = []
    for (row, peer) in peers {
        peer.start()
        for _ in 0..<warmUpRoundTrips { peer.roundTrip() }
        let pairs = PairedChunks(rounds: rounds, baseline: { timedRoundTrips(peer, perChunk) },
                                 measured: { timedRoundTrips(loop, perChunk) })
        peer.stop()
        rows.append((row, pairs))
    }
    loop.stop()
    let fastest = rows.max { quantile($0.pairs.worseOrderRatios, 0.5) < quantile($1.pairs.worseOrderRatios, 0.5) }!
    let fastestName = String(fastest.row.dropFirst("Loop ÷ ".count))
    let title = "cross-thread round trip, both threads on CPU \(roundTripCPU) (\(PairedChunks.schedule(rounds: rounds, chunksOf: "\(perChunk)")) per peer)"
    print(PairedChunks.header(title, baseline: "peer", measured: "Loop"))
    for (row, pairs) in rows { print("| \(row) | \(pairs.tableCells) |") }
    print("| Loop ÷ the fastest peer of this run (\(fastestName)) | \(fastest.pairs.tableCells) |")
    return nil
}

var runner = pthread_t()
let created = pthread_create(&runner, nil, measure, nil)
guard created == 0 else { fatalError("round-trip-pairs: pthread_create failed: \(created)") }
pthread_join(runner, nil)
