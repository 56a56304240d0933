import Testing
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// S9: how the end of a connection reaches an fd source — the peer's end of sending
/// (`readClosed`), a hang-up and an error are three events a handler tells apart, on real TCP
/// sockets over loopback and on pipes.
@Suite("FileSourceEnds")
struct FileSourceEndTests {
    /// A connected TCP pair on 127.0.0.1 (ours, the peer's); the caller closes both.
    private func tcpPair() throws -> (Int32, Int32) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(listener >= 0, "socket: errno \(errno)")
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(listener, raw, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, raw, &length) == 0
            }
        }
        try #require(bound, "bind/listen/getsockname: errno \(errno)")
        let peer = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(peer >= 0, "socket: errno \(errno)")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(peer, $0, length) == 0 }
        }
        try #require(connected, "connect: errno \(errno)")
        let ours = accept(listener, nil, nil)
        try #require(ours >= 0, "accept: errno \(errno)")
        try #require(fcntl(ours, F_SETFD, FD_CLOEXEC) == 0, "fcntl: errno \(errno)")   // as the other two
        return (ours, peer)
    }

    /// Marks `descriptors` close-on-exec, so no process another test spawns keeps a copy past its
    /// exec (the Glibc module has no `pipe2`); whether every mark took.
    private func closingOnExec(_ descriptors: [Int32]) -> Bool {
        descriptors.allSatisfy { fcntl($0, F_SETFD, FD_CLOEXEC) == 0 }
    }

    /// Runs `fd` as a source with `interest` through one polling pass after `action`; the events
    /// each callout got. With `awaitingAClose`, the pass may instead wait, 10 s at most, for the
    /// first event: the end a close makes comes when the descriptor's last copy goes, and a child
    /// process that a concurrent test is spawning holds a copy of every descriptor until its
    /// exec, so the event can come a moment after the close.
    private func events(of fd: Int32, interest: LoopFileSource.Events, awaitingAClose: Bool = false,
                        after action: () -> Void) -> [String] {
        let loop = awaitingAClose ? Loop(clock: MonotonicClock.shared) : virtualLoop().0
        defer { loop.tearDown() }
        let seen = Trace()
        let source = LoopFileSource(fd: fd, events: interest, label: "end") { events in seen.add("\(events)") }
        loop.add(source, mode: .default)
        action()
        loop.run(mode: .default, timeout: awaitingAClose ? 10 : 0, returnAfterSourceHandled: awaitingAClose)
        source.invalidate()
        return seen.all
    }

    @Test("the peer's shutdown(SHUT_WR) is readClosed, not a hang-up; replies still go out")
    func halfCloseIsReadClosed() throws {
        let (ours, peer) = try tcpPair()
        defer { close(ours); close(peer) }
        #expect(events(of: ours, interest: [.readClosed], after: { _ = shutdown(peer, Int32(SHUT_WR)) }) == ["[readClosed]"])
        // Without the interest, the end of input is what CF reports: readable, and a read of 0.
        #expect(events(of: ours, interest: [.readable], after: {}) == ["[readable]"])
        var byte: UInt8 = 0
        #expect(read(ours, &byte, 1) == 0, "the end of input reads as 0")
        // Half-closed, not gone: our reply reaches the peer.
        byte = 42
        #expect(send(ours, &byte, 1, Int32(MSG_NOSIGNAL)) == 1)
        var reply: UInt8 = 0
        #expect(recv(peer, &reply, 1, 0) == 1 && reply == 42)
        #expect(events(of: ours, interest: [], after: {}) == [], "no interest, no hang-up: nothing is reported")
    }

    @Test("readClosed stays ready until the handler stops asking for it")
    func readClosedIsAnInterest() throws {
        let (ours, peer) = try tcpPair()
        defer { close(ours); close(peer) }
        #expect(shutdown(peer, Int32(SHUT_WR)) == 0)
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let seen = Trace()
        let source = LoopFileSource(fd: ours, events: [.readClosed], label: "end") { events in seen.add("\(events)") }
        loop.add(source, mode: .default)
        loop.run(mode: .default, timeout: 0)
        loop.run(mode: .default, timeout: 0)
        #expect(seen.all == ["[readClosed]", "[readClosed]"], "level-triggered")
        try source.setInterest([])
        loop.run(mode: .default, timeout: 0)
        #expect(seen.all.count == 2, "no longer asked for: \(seen.all)")
        #expect(source.interest == [])
    }

    @Test("a reset is a hang-up and an error, reported with no interest at all")
    func resetIsHangUpAndError() throws {
        let (ours, peer) = try tcpPair()
        defer { close(ours) }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)   // close sends RST
        #expect(setsockopt(peer, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size)) == 0)
        #expect(events(of: ours, interest: [], awaitingAClose: true, after: { close(peer) }) == ["[hangUp, error]"])
        #expect(events(of: ours, interest: [.readable, .readClosed], after: {}) == ["[readable, readClosed, hangUp, error]"],
                "the error stays pending until a read or SO_ERROR takes it")
        var byte: UInt8 = 0
        #expect(read(ours, &byte, 1) == -1 && errno == ECONNRESET)
        #expect(events(of: ours, interest: [], after: {}) == ["[hangUp]"], "taken by the read: only the hang-up is left")
    }

    @Test("both directions shut down is a hang-up without an error")
    func bothWaysClosedIsHangUp() throws {
        let (ours, peer) = try tcpPair()
        defer { close(ours); close(peer) }
        #expect(shutdown(ours, Int32(SHUT_WR)) == 0)
        #expect(events(of: ours, interest: [], after: { _ = shutdown(peer, Int32(SHUT_WR)) }) == ["[hangUp]"])
    }

    @Test("pipes: the writers gone is a hang-up for the reader; the readers gone is an error for the writer")
    func pipeEnds() {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0 && closingOnExec(ends))
        #expect(events(of: ends[0], interest: [], awaitingAClose: true, after: { close(ends[1]) }) == ["[hangUp]"])
        close(ends[0])
        #expect(pipe(&ends) == 0 && closingOnExec(ends))
        #expect(events(of: ends[1], interest: [], awaitingAClose: true, after: { close(ends[0]) }) == ["[error]"])
        close(ends[1])
    }
}
