// The cross-thread round trip's responders that both the package-benchmark rows
// (LoopBenchmarks/RoundTrip.swift) and the paired tool (Tools/RoundTripPairs) run: the
// eventfd floor and the loop. A runner thread "B" posts work to a responder thread "A" and
// blocks reading an eventfd until A acknowledges by writing it; both are pinned to
// `roundTripCPU`.

import CBenchSupport
import Dispatch
import RunLoopCore
import Synchronization

/// One responder thread and the way to reach it. `start()` runs in the benchmark's set-up,
/// `roundTrip()` on the pinned runner thread, `stop()` in the tear-down.
public protocol RoundTripPeer: AnyObject, Sendable {
    func start()
    func roundTrip()
    func stop()
}

/// The floor: B writes eventfd `ping`; A wakes in epoll_wait, reads it and writes `ack`.
/// `@unchecked Sendable`: the descriptors are set in `start()` before A exists and cleared in
/// `stop()` after it is joined; the only state both threads touch while A runs is `stopping`.
public final class EventfdPingPong: RoundTripPeer, @unchecked Sendable {
    private var ping: Int32 = -1
    private var ack: Int32 = -1
    private let stopping = Atomic(false)
    private var responder: PinnedThread?

    public init() {}

    public func start() {
        ping = bench_eventfd()
        ack = bench_eventfd()
        stopping.store(false, ordering: .relaxed)
        let epoll = bench_epoll_for(ping)
        precondition(ping >= 0 && ack >= 0 && epoll >= 0, "eventfd/epoll set-up failed")
        responder = PinnedThread(cpu: roundTripCPU) { self.respond(epoll) }
    }

    private func respond(_ epoll: Int32) {
        while true {
            _ = bench_epoll_wait_readable(epoll)
            _ = bench_eventfd_wait(ping)
            if stopping.load(ordering: .acquiring) { break }
            _ = bench_eventfd_post(ack)
        }
        bench_close(epoll)
    }

    public func roundTrip() {
        _ = bench_eventfd_post(ping)
        _ = bench_eventfd_wait(ack)
    }

    public func stop() {
        stopping.store(true, ordering: .releasing)
        _ = bench_eventfd_post(ping)
        responder?.join()
        responder = nil
        bench_close(ping)
        bench_close(ack)
    }
}

/// RunLoopKit: A runs `Loop.run()` with a source0 whose perform acks; B signals it and wakes A.
/// `@unchecked Sendable`: `loop`, `source` and `ack` are written by A before it signals `ready`
/// and only read by B after `ready.wait()`; `stop()` joins A before clearing them.
public final class LoopRoundTrip: RoundTripPeer, @unchecked Sendable {
    private var ack: Int32 = -1
    private var loop: Loop?
    private var source: LoopSource?
    private var responder: PinnedThread?

    public init() {}

    public func start() {
        ack = makeAckEventfd()
        responder = startResponder { self.serve($0) }
    }

    private func serve(_ ready: DispatchSemaphore) {
        let loop = Loop.current
        let ack = self.ack
        let source = LoopSource(label: "ack") { _ = bench_eventfd_post(ack) }
        loop.add(source, mode: .default)
        self.loop = loop
        self.source = source
        ready.signal()
        loop.run()
        loop.remove(source, mode: .default)
        source.invalidate()
    }

    public func roundTrip() {
        source?.signal()
        loop?.wakeUp()
        _ = bench_eventfd_wait(ack)
    }

    public func stop() {
        loop?.stop()
        responder?.join()
        responder = nil
        loop = nil
        source = nil
        bench_close(ack)
    }
}

/// The eventfd A writes to acknowledge a round trip.
public func makeAckEventfd() -> Int32 {
    let fd = bench_eventfd()
    precondition(fd >= 0, "eventfd set-up failed")
    return fd
}

/// Starts responder A on `roundTripCPU` running `serve`, and returns once `serve` signalled the
/// semaphore it is given (its loop and source are installed).
public func startResponder(_ serve: @escaping @Sendable (DispatchSemaphore) -> Void) -> PinnedThread {
    let ready = DispatchSemaphore(value: 0)
    let responder = PinnedThread(cpu: roundTripCPU) { serve(ready) }
    ready.wait()
    return responder
}

/// Round trips before the measured span: the first ones pay for page faults and lazy set-up.
public let warmUpRoundTrips = 64
