import BenchPasses
import Benchmark
import CBenchSupport
import ExecutorPeers
import NIOCore
import NIOPosix

// SwiftNIO's epoll loop (MultiThreadedEventLoopGroup with one thread) as a peer. NIO runs its
// loop on a thread of its own and has no "run one pass" call, so its polling-pass and timer
// counterparts are chains: each task (or scheduled task) re-posts itself from the loop thread,
// one loop iteration per hop, and the last hop writes an eventfd the runner waits on. The NIO
// thread and the runner are both pinned to `roundTripCPU`; the one wake-up per sample of 1,000
// hops is in the measured span (about 5 ns per hop at the same-CPU floor of ~5 µs).

/// The state of a running chain. Written by the runner before it posts the first hop and read
/// by the hops on NIO's thread afterwards (the post is the hand-over); the runner reads `hops`
/// again only after the done eventfd. The counters are `@exclusivity(unchecked)`, as
/// `calloutCount` is: the harness's counting, not the work.
nonisolated(unsafe) var nioChainLoop: (any EventLoop)?
@exclusivity(unchecked) nonisolated(unsafe) var nioHopsLeft = 0
@exclusivity(unchecked) nonisolated(unsafe) var nioHops = 0
nonisolated(unsafe) var nioChainDone: Int32 = -1

/// One hop of an `execute` chain: count, then re-post itself or signal the end.
@Sendable func nioExecuteHop() {
    nioHops &+= 1
    nioHopsLeft -= 1
    if nioHopsLeft > 0 {
        nioChainLoop?.execute(nioExecuteHop)
    } else {
        _ = bench_eventfd_post(nioChainDone)
    }
}

/// One hop of a timer chain: a task scheduled 0 ns ahead that schedules the next one.
@Sendable func nioTimerHop() {
    nioHops &+= 1
    nioHopsLeft -= 1
    if nioHopsLeft > 0 {
        _ = nioChainLoop?.scheduleTask(in: .nanoseconds(0), nioTimerHop)
    } else {
        _ = bench_eventfd_post(nioChainDone)
    }
}

/// Runs `count` hops of the chain whose first hop `post` sends, and waits for its end.
func runNIOChain(_ loop: any EventLoop, count: Int, post: (any EventLoop) -> Void) -> Int {
    nioChainLoop = loop
    nioHops = 0
    nioHopsLeft = count
    post(loop)
    _ = bench_eventfd_wait(nioChainDone)
    return nioHops
}

/// Registers a chain benchmark named "<work> · <name>": SwiftNIO has no pass, so a chain is
/// not the work of the other implementations, and the name says so.
func registerNIOChainBenchmark(work: String, name: String, post: @escaping @Sendable (any EventLoop) -> Void) {
    let peer = NIOPeer()
    Benchmark("\(work) · \(name)") { benchmark in
        guard let loop = peer.loop else {
            benchmark.error("SwiftNIO's loop did not start")
            return
        }
        let pinned = bench_pin_current_thread(roundTripCPU)
        defer { _ = bench_unpin_current_thread() }
        guard pinned == 0 else {
            benchmark.error("could not pin the runner thread to CPU \(roundTripCPU) (errno \(pinned))")
            return
        }
        _ = runNIOChain(loop, count: warmUpPasses, post: post)
        let expected = benchmark.scaledIterations.count
        benchmark.startMeasurement()
        let hops = runNIOChain(loop, count: expected, post: post)
        benchmark.stopMeasurement()
        if hops != expected {
            benchmark.error("SwiftNIO chain: \(hops) hops, expected \(expected)")
        }
    } setup: {
        nioChainDone = makeAckEventfd()
        try peer.start()
    } teardown: {
        peer.stop()
        bench_close(nioChainDone)
        nioChainDone = -1
    }
}

func registerNIOHopBenchmark(work: String) {
    registerNIOChainBenchmark(work: work, name: "SwiftNIO execute chain (not a pass)") { $0.execute(nioExecuteHop) }
}

func registerNIOTimerBenchmark(work: String) {
    registerNIOChainBenchmark(work: work, name: "SwiftNIO scheduleTask chain (not a pass)") { _ = $0.scheduleTask(in: .nanoseconds(0), nioTimerHop) }
}

/// SwiftNIO in the round trip: B calls `execute` with a task that writes the ack eventfd.
/// `@unchecked Sendable`: see `NIOPeer`; `ack` is set before the loop starts.
final class NIORoundTrip: RoundTripPeer, @unchecked Sendable {
    private let peer = NIOPeer()

    func start() {
        nioRoundTripAck = makeAckEventfd()
        do { try peer.start() } catch { preconditionFailure("SwiftNIO's loop did not start: \(error)") }
    }

    func roundTrip() {
        peer.loop?.execute(nioPostAck)
        _ = bench_eventfd_wait(nioRoundTripAck)
    }

    func stop() {
        peer.stop()
        bench_close(nioRoundTripAck)
    }
}

/// The eventfd NIO's round-trip task writes; set before the loop thread exists.
nonisolated(unsafe) var nioRoundTripAck: Int32 = -1

@Sendable func nioPostAck() { _ = bench_eventfd_post(nioRoundTripAck) }
