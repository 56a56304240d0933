// The cross-thread round trip's responders that both the package-benchmark rows
// (LoopBenchmarks/RoundTrip.swift) and the paired tool (Tools/RoundTripPairs) run: the two
// eventfd floors, the loop, libuv and GLib. A runner thread "B" posts work to a responder
// thread "A" and blocks reading an eventfd until A acknowledges by writing it; both are pinned
// to `roundTripCPU`.

import CBenchSupport
import CGLibPeer
import CLibuvPeer
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

/// The bare floor: A blocks in read(2) on eventfd `ping` itself, with no epoll, and writes `ack`.
/// Four system calls per round trip, the fewest any cross-thread wake-up with an ack can make;
/// an event loop, which waits for many descriptors at once, adds at least its wait call.
/// `@unchecked Sendable`: as `EventfdPingPong`.
public final class BareReadPingPong: RoundTripPeer, @unchecked Sendable {
    private var ping: Int32 = -1
    private var ack: Int32 = -1
    private let stopping = Atomic(false)
    private var responder: PinnedThread?

    public init() {}

    public func start() {
        ping = bench_eventfd()
        ack = bench_eventfd()
        stopping.store(false, ordering: .relaxed)
        precondition(ping >= 0 && ack >= 0, "eventfd set-up failed")
        responder = PinnedThread(cpu: roundTripCPU) { self.respond() }
    }

    private func respond() {
        while true {
            _ = bench_eventfd_wait(ping)
            if stopping.load(ordering: .acquiring) { break }
            _ = bench_eventfd_post(ack)
        }
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

/// libuv: A runs uv_run(UV_RUN_DEFAULT) with a uv_async_t whose callback acks (all in C);
/// B calls uv_async_send. `@unchecked Sendable`: the C peer is created in `start()` and freed
/// in `stop()`, which joins A.
public final class LibuvRoundTrip: RoundTripPeer, @unchecked Sendable {
    private var peer: OpaquePointer?

    public init() {}

    public func start() {
        peer = bench_uv_round_trip_start(roundTripCPU)
        precondition(peer != nil, "libuv round-trip set-up failed")
    }

    public func roundTrip() { _ = bench_uv_round_trip(peer) }

    public func stop() {
        bench_uv_round_trip_stop(peer)
        peer = nil
    }
}

/// GLib: A runs g_main_loop_run; B gives a custom GSource ready time 0
/// (`g_source_set_ready_time`, which wakes A's context) and its dispatch acks.
/// `@unchecked Sendable`: as `LibuvRoundTrip`.
public final class GLibRoundTrip: RoundTripPeer, @unchecked Sendable {
    private var peer: OpaquePointer?

    public init() {}

    public func start() {
        peer = bench_glib_round_trip_start(roundTripCPU)
        precondition(peer != nil, "GLib round-trip set-up failed")
    }

    public func roundTrip() { _ = bench_glib_round_trip(peer) }

    public func stop() {
        bench_glib_round_trip_stop(peer)
        peer = nil
    }
}

/// RunLoopKit: A runs `Loop.run()` with a source0 whose perform acks; B signals it and wakes A.
/// `@unchecked Sendable`: `post`, `loop` and `ack` are written by A before it signals `ready`
/// and only read by B after `ready.wait()`; `stop()` joins A before clearing them.
public final class LoopRoundTrip: RoundTripPeer, @unchecked Sendable {
    private var ack: Int32 = -1
    /// B's half of a round trip before its wait: signal the source, wake the loop. A closure
    /// made once that captures the two: reading it costs one retain of its context, and the
    /// captured loop and source are borrowed. Read from `var`s of this class, the loop and the
    /// source would each be retained and released every round trip (about 250 instructions,
    /// the loop's retain taking the runtime's slow path: items refer to their loop weakly, which
    /// gives it a side table), a cost of the harness that the C peers' harnesses do not pay.
    private var post: (@Sendable () -> Void)?
    private var loop: Loop?
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
        post = {
            source.signal()
            loop.wakeUp()
        }
        ready.signal()
        loop.run()
        loop.remove(source, mode: .default)
        source.invalidate()
    }

    public func roundTrip() {
        post?()
        _ = bench_eventfd_wait(ack)
    }

    public func stop() {
        loop?.stop()
        responder?.join()
        responder = nil
        post = nil
        loop = nil
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
