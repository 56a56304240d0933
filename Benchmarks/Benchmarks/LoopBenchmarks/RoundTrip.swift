import Benchmark
import BenchPasses
import CBenchSupport
import CoreFoundation
import Dispatch
import Foundation
import RunLoopCore
import Synchronization

// Cross-thread round trip. The benchmark runner's thread is "B": it posts work to a responder
// thread "A" and blocks reading an eventfd until A acknowledges by writing it. A and B are both
// pinned to `roundTripCPU`. The floor is the same exchange with nothing but an eventfd that A
// waits for in epoll_wait, and the bare floor the same exchange with A blocked in read(2). The
// floors', the loop's, libuv's and GLib's responders live in
// Support/BenchPasses/RoundTripPeers.swift, which the paired tool (Tools/RoundTripPairs) shares.

/// The real CFRunLoop: A runs `CFRunLoopRun()` with a version-0 source whose perform acks;
/// B calls `CFRunLoopSourceSignal` + `CFRunLoopWakeUp`.
/// `@unchecked Sendable`: same hand-over as `LoopRoundTrip` (written by A before `ready`, read
/// by B after it, cleared after the join); CF's signal, wake-up and stop are thread-safe.
final class CFRunLoopRoundTrip: RoundTripPeer, @unchecked Sendable {
    private var ack: Int32 = -1
    private var runLoop: CFRunLoop?
    private var source: CFRunLoopSource?
    private var responder: PinnedThread?

    func start() {
        ack = makeAckEventfd()
        responder = startResponder { self.serve($0) }
    }

    private func serve(_ ready: DispatchSemaphore) {
        let runLoop = CFRunLoopGetCurrent()
        var context = CFRunLoopSourceContext()
        context.version = 0
        context.info = Unmanaged.passUnretained(self).toOpaque()
        context.perform = { info in
            guard let info else { return }
            _ = bench_eventfd_post(Unmanaged<CFRunLoopRoundTrip>.fromOpaque(info).takeUnretainedValue().ack)
        }
        let source = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &context)
        CFRunLoopAddSource(runLoop, source, kCFRunLoopDefaultMode)
        self.runLoop = runLoop
        self.source = source
        ready.signal()
        CFRunLoopRun()
        CFRunLoopRemoveSource(runLoop, source, kCFRunLoopDefaultMode)
        CFRunLoopSourceInvalidate(source)
    }

    func roundTrip() {
        CFRunLoopSourceSignal(source)
        CFRunLoopWakeUp(runLoop)
        _ = bench_eventfd_wait(ack)
    }

    func stop() {
        if let runLoop { CFRunLoopStop(runLoop) }
        responder?.join()
        responder = nil
        runLoop = nil
        source = nil
        bench_close(ack)
    }
}

/// Foundation's RunLoop: A runs `RunLoop.run(mode:before:)` (kept alive by an idle CF source);
/// B calls `RunLoop.perform` on A's RunLoop with a block that acks, then `CFRunLoopWakeUp`,
/// because on Linux `perform` does not wake a sleeping loop.
/// `@unchecked Sendable`: same hand-over as `LoopRoundTrip`; `stopping` is only touched on A.
final class FoundationRunLoopRoundTrip: RoundTripPeer, @unchecked Sendable {
    private var runLoop: RunLoop?
    private var cfRunLoop: CFRunLoop?
    private var responder: PinnedThread?
    private var stopping = false

    func start() {
        foundationAck = makeAckEventfd()
        responder = startResponder { self.serve($0) }
    }

    private func serve(_ ready: DispatchSemaphore) {
        let cfRunLoop = CFRunLoopGetCurrent()
        var context = CFRunLoopSourceContext()
        context.version = 0
        let keepAlive = CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &context)
        CFRunLoopAddSource(cfRunLoop, keepAlive, kCFRunLoopDefaultMode)
        self.runLoop = RunLoop.current
        self.cfRunLoop = cfRunLoop
        stopping = false
        ready.signal()
        while !stopping { _ = RunLoop.current.run(mode: .default, before: .distantFuture) }
        CFRunLoopRemoveSource(cfRunLoop, keepAlive, kCFRunLoopDefaultMode)
        CFRunLoopSourceInvalidate(keepAlive)
    }

    func roundTrip() {
        runLoop?.perform(inModes: [.default], block: foundationPostAck)
        CFRunLoopWakeUp(cfRunLoop)
        _ = bench_eventfd_wait(foundationAck)
    }

    func stop() {
        // A block does not end `run(mode:before:)`, so the block also stops A's CF loop.
        runLoop?.perform(inModes: [.default]) {
            self.stopping = true
            CFRunLoopStop(CFRunLoopGetCurrent())
        }
        CFRunLoopWakeUp(cfRunLoop)
        responder?.join()
        responder = nil
        runLoop = nil
        cfRunLoop = nil
        bench_close(foundationAck)
    }
}

/// The eventfd Foundation's round-trip block writes; set before the responder exists.
nonisolated(unsafe) var foundationAck: Int32 = -1

@Sendable func foundationPostAck() { _ = bench_eventfd_post(foundationAck) }

func registerRoundTripBenchmarks() {
    let peers: [(name: String, peer: any RoundTripPeer)] = [
        ("eventfd ping-pong via epoll (floor)", EventfdPingPong()),
        ("eventfd ping-pong, bare read (floor)", BareReadPingPong()),
        ("Loop", LoopRoundTrip()),
        ("CFRunLoop", CFRunLoopRoundTrip()),
        ("Foundation RunLoop", FoundationRunLoopRoundTrip()),
        ("libuv", LibuvRoundTrip()),
        ("GLib", GLibRoundTrip()),
        ("SwiftNIO", NIORoundTrip()),
    ]
    for (name, peer) in peers {
        Benchmark("cross-thread round trip, both on CPU \(roundTripCPU) · \(name)") { benchmark in
            let pinned = bench_pin_current_thread(roundTripCPU)
            defer { _ = bench_unpin_current_thread() }
            guard pinned == 0, bench_current_cpu() == roundTripCPU else {
                benchmark.error("could not pin the runner thread to CPU \(roundTripCPU) (errno \(pinned))")
                return
            }
            for _ in 0..<warmUpRoundTrips { peer.roundTrip() }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { peer.roundTrip() }
            benchmark.stopMeasurement()
        } setup: {
            peer.start()
        } teardown: {
            peer.stop()
        }
    }
}
