import Testing
@testable import RunLoopCore
import PThreads
#if canImport(Glibc)
import Glibc
#endif

/// Ports with a queue limit, as a Mach port has: a full queue refuses, a waiting send waits for
/// room, the consumer may take a batch per pass, and nothing is lost.
@Suite("BoundedPorts")
struct BoundedPortTests {
    @Test("a full queue throws .full; invalidation makes sends throw .closed; nothing queued is lost")
    func fullAndClosed() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let received = Trace()
        let port = try LoopPortSource(label: "bounded", capacity: 2) { message in
            if case .bytes(let bytes) = message { received.add("\(bytes[0])") }
        }
        loop.add(port, mode: .default)
        try port.send([1])
        try port.send([2])
        #expect(throws: LoopPortSource.SendError.full(capacity: 2)) { try port.send([3]) }
        #expect(port.pendingCount == 2)
        loop.run(mode: .default, timeout: 0)
        loop.run(mode: .default, timeout: 0)
        #expect(received.all == ["1", "2"])
        port.invalidate()
        #expect(throws: LoopPortSource.SendError.closed) { try port.send([4]) }
    }

    @Test("messagesPerPass hands over a batch in one pass, still one handled source")
    func batchPerPass() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let received = Trace()
        let port = try LoopPortSource(label: "batch", messagesPerPass: 3) { _ in received.add("#\(loop.passCount)") }
        loop.add(port, mode: .default)
        for value in 0..<5 { try port.send([UInt8(value)]) }
        #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .handledSource)
        #expect(received.all.count == 3, "the first pass takes three: \(received.all)")
        #expect(Set(received.all).count == 1)
        loop.run(mode: .default, timeout: 0)
        #expect(received.all.count == 5 && port.pendingCount == 0)
    }

    @Test("a blocked send times out with .full, and succeeds once the loop makes room")
    func blockingSendWaitsForRoom() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let port = try LoopPortSource(label: "waiting", capacity: 1) { _ in }
        loop.add(port, mode: .default)
        try port.send([0])
        let start = MonotonicClock.shared.now
        #expect(throws: LoopPortSource.SendError.full(capacity: 1)) {
            try port.send(.bytes([1]), waitingUpTo: .milliseconds(20))
        }
        #expect(start.duration(to: MonotonicClock.shared.now) >= .milliseconds(20), "the send gave up early")

        // A producer thread blocks until this thread's pass takes the first message.
        let sent = Flag()
        let producer = BackgroundThread {
            do {
                try port.send(.bytes([2]), waitingUpTo: .seconds(30))
                sent.set()
            } catch {
                Issue.record("the waiting send failed: \(error)")
            }
        }
        loop.run(mode: .default, timeout: 0)          // takes [0]: room for the producer
        producer.join()
        #expect(sent.isSet, "the blocked producer never got room")
        #expect(port.pendingCount == 1)
    }

    @Test("sendWhenRoom waits for room, and a cancelled wait throws .cancelled and leaves nothing behind")
    func asyncSendWaitsAndCancels() async throws {
        let loop = Loop(clock: VirtualClock())
        let port = try LoopPortSource(label: "async", capacity: 1) { _ in }
        loop.add(port, mode: .default)
        try port.send([0])
        let cancelled = Task { try await port.sendWhenRoom(.bytes([9])) }
        cancelled.cancel()
        await #expect(throws: LoopPortSource.SendError.cancelled) { try await cancelled.value }
        #expect(port.pendingCount == 1, "a cancelled send must not queue its message")
        port.invalidate()
        await #expect(throws: LoopPortSource.SendError.closed) { try await port.sendWhenRoom(.bytes([1])) }
        _ = loop   // torn down by its deinit (a task may end on another thread than it began)
    }
}
