@testable import EchoService
import RunLoopKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 28: a peer that finished sending gets every reply, and the service's own closes —
/// shutdown, idle timeout, protocol error — are lingering closes the peer sees as an end of
/// file; a reset only where the service gives up (forced, linger time over, replies unread),
/// and then counted.
@Suite("EchoClosing", .serialized)
struct EchoClosingTests {
    /// Replies back up in the server (fixed small socket buffers, a client with a tiny receive
    /// buffer) without the server pausing its reading, so the peer's end of input reaches the
    /// server while replies still wait.
    private func backedUpConfiguration() -> EchoConfiguration {
        var configuration = EchoConfiguration()
        configuration.socketBufferSize = 64 * 1024
        configuration.highWaterMark = 1024 * 1024
        configuration.lowWaterMark = 256 * 1024
        configuration.lingerTimeout = .milliseconds(100)
        configuration.lingerTime = .milliseconds(300)
        return configuration
    }

    @Test("half-close: the peer's end of input with replies waiting — every byte comes back, then an end of file")
    func halfClosedConnectionGetsEveryReply() throws {
        let server = try ServerThread(backedUpConfiguration())
        let client = try BlockingClient(port: server.port, receiveBuffer: 4096)
        let sent = patternBytes(512 * 1024)
        try client.sendAll(sent)
        try client.shutDownWriting()
        #expect(waitUntil(timeout: .seconds(10)) { server.counters.snapshot.halfClosedKept == 1 },
                "the server saw the end of input with no reply waiting, or not at all: \(server.counters.snapshot)")
        let (received, end) = client.readToEnd()
        #expect(end == .endOfFile)
        #expect(received.count == sent.count && received == sent, "\(received.count) of \(sent.count) bytes, exact: \(received == sent)")
        #expect(server.shutdown(timeout: .seconds(10)))
        let statistics = server.counters.snapshot
        #expect(statistics.closedByPeer == 1 && statistics.resets == 0 && statistics.repliesDropped == 0, "\(statistics)")
    }

    @Test("half-close refused (allowHalfClosure false): closed at once with a reset, the dropped replies counted")
    func refusedHalfCloseResets() throws {
        var configuration = backedUpConfiguration()
        configuration.allowHalfClosure = false
        let server = try ServerThread(configuration)
        let client = try BlockingClient(port: server.port, receiveBuffer: 4096)
        let sent = patternBytes(512 * 1024)
        try client.sendAll(sent)
        try client.shutDownWriting()
        #expect(waitUntil(timeout: .seconds(10)) { server.counters.snapshot.halfCloseRefusals == 1 }, "\(server.counters.snapshot)")
        let (received, end) = client.readToEnd()
        #expect(end == .reset, "a cut-off echo must not end like a complete one")
        #expect(received.count < sent.count && received == Array(sent.prefix(received.count)))
        #expect(server.shutdown(timeout: .seconds(10)))
        let statistics = server.counters.snapshot
        #expect(statistics.resets == 1 && statistics.repliesDropped > 0, "\(statistics)")
    }

    @Test("shutdown with a slow reader: the replies held go out, new input is discarded, the peer sees an end of file")
    func shutdownWithSlowReaderEndsWithEndOfFile() throws {
        var configuration = backedUpConfiguration()
        configuration.highWaterMark = 256 * 1024
        configuration.lowWaterMark = 64 * 1024
        configuration.lingerTimeout = .seconds(5)   // the client's own close ends the linger
        configuration.lingerTime = .seconds(10)
        let server = try ServerThread(configuration)
        var client: BlockingClient? = try BlockingClient(port: server.port, receiveBuffer: 4096)
        let sent = patternBytes(400 * 1024)
        try client?.sendAll(sent)
        #expect(waitUntil(timeout: .seconds(10)) { server.counters.snapshot.pausedNow == 1 }, "\(server.counters.snapshot)")
        server.control.requestShutdown()
        let (received, end) = try #require(client).readToEnd()
        #expect(end == .endOfFile, "the peer that read everything sees an end of file, not a reset")
        #expect(received == Array(sent.prefix(received.count)), "the echo is a prefix of what was sent")
        #expect(received.count >= 256 * 1024, "every reply held at the shutdown went out: \(received.count) bytes")
        client = nil   // the peer closes: the lingering close ends
        #expect(server.waitUntilFinished(timeout: .seconds(10)), "\(server.counters.snapshot)")
        let statistics = server.counters.snapshot
        #expect(statistics.closedByShutdown == 1 && statistics.resets == 0, "\(statistics)")
        #expect(statistics.bytesEchoed == received.count, "\(statistics)")
        #expect(statistics.bytesEchoed + statistics.bytesDiscarded == sent.count, "every byte read was echoed or discarded: \(statistics)")
    }

    @Test("lingering close of a quiet peer: an end of file, then the close after lingerTimeout, no reset")
    func quietPeerLingeringClose() throws {
        let server = try ServerThread(backedUpConfiguration())
        let client = try BlockingClient(port: server.port)
        try client.sendAll(patternBytes(1000))
        #expect(client.readToEndOf(count: 1000) == patternBytes(1000))
        server.control.requestShutdown()
        #expect(client.readToEnd().end == .endOfFile)
        #expect(server.waitUntilFinished(timeout: .seconds(10)), "\(server.counters.snapshot)")
        let statistics = server.counters.snapshot
        #expect(statistics.closedByShutdown == 1 && statistics.resets == 0, "\(statistics)")
    }

    @Test("lingering close of a peer that keeps sending: reset once lingerTime runs out, counted")
    func lingerTimeRunsOut() throws {
        var configuration = backedUpConfiguration()
        // A tick long enough that a client descheduled on a loaded machine still sends in each.
        configuration.lingerTimeout = .milliseconds(500)
        configuration.lingerTime = .seconds(1)
        let server = try ServerThread(configuration)
        let client = try BlockingClient(port: server.port, timeout: .seconds(2))
        server.control.requestShutdown()
        #expect(client.readToEnd().end == .endOfFile, "the writing side is shut down first")
        // Keep sending: the server discards it, and gives up at lingerTime (1 s).
        let deadline = MonotonicClock.shared.now.advanced(by: .seconds(10))
        var failure: Int32 = 0
        while failure == 0 && MonotonicClock.shared.now < deadline {
            if case .failure(let error) = client.sendOnce(patternBytes(1024)) { failure = error.code }
        }
        #expect(failure == ECONNRESET || failure == EPIPE, "errno \(failure)")
        #expect(server.waitUntilFinished(timeout: .seconds(10)), "\(server.counters.snapshot)")
        let statistics = server.counters.snapshot
        #expect(statistics.lingerExpired == 1 && statistics.resets == 1 && statistics.closedByShutdown == 1, "\(statistics)")
        #expect(statistics.bytesDiscarded > 0, "\(statistics)")
    }

    @Test("shutdown grace over with replies unread: a reset, counted as forced")
    func graceOverForcesNeverReader() throws {
        var configuration = backedUpConfiguration()
        configuration.highWaterMark = 256 * 1024
        configuration.lowWaterMark = 64 * 1024
        configuration.shutdownGrace = .milliseconds(200)
        let server = try ServerThread(configuration)
        let client = try BlockingClient(port: server.port, receiveBuffer: 4096)
        try client.sendAll(patternBytes(400 * 1024))
        #expect(waitUntil(timeout: .seconds(10)) { server.counters.snapshot.pausedNow == 1 }, "\(server.counters.snapshot)")
        server.control.requestShutdown()
        #expect(server.waitUntilFinished(timeout: .seconds(10)), "\(server.counters.snapshot)")
        #expect(client.readToEnd().end == .reset)
        let statistics = server.counters.snapshot
        #expect(statistics.forcedCloses == 1 && statistics.resets == 1 && statistics.repliesDropped > 0, "\(statistics)")
    }

    @Test("idle with replies the peer never read: a reset, counted; idle after the last reply: an end of file")
    func idleEndings() throws {
        var configuration = backedUpConfiguration()
        configuration.highWaterMark = 256 * 1024
        configuration.lowWaterMark = 64 * 1024
        configuration.idleTimeout = .milliseconds(300)   // longer than a loaded machine's scheduling gaps
        let server = try ServerThread(configuration)
        let payload = patternBytes(400 * 1024)
        let neverReader = try BlockingClient(port: server.port, receiveBuffer: 4096)
        try neverReader.sendAll(payload)
        let quiet = try BlockingClient(port: server.port)
        try quiet.sendAll(patternBytes(100))
        #expect(quiet.readToEndOf(count: 100) == patternBytes(100))
        #expect(quiet.readToEnd().end == .endOfFile, "idle after the last reply: a lingering close")
        #expect(waitUntil(timeout: .seconds(10)) { server.counters.snapshot.closedIdle == 2 }, "\(server.counters.snapshot)")
        #expect(neverReader.readToEnd().end == .reset)
        #expect(server.shutdown(timeout: .seconds(10)))
        let statistics = server.counters.snapshot
        #expect(statistics.resets == 1 && statistics.repliesDropped > 0, "\(statistics)")
    }
}
