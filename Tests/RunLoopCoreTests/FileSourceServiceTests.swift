import Testing
import RunLoopDiagnostics
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// fd sources as a service uses them: interest changed in place, hang-up and error apart from
/// readability, several ready descriptors in one pass, no starvation.
@Suite("FileSourceServices")
struct FileSourceServiceTests {
    /// A connected AF_UNIX stream pair, closed by the caller.
    private func socketPair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        let status = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
        precondition(status == 0, "socketpair failed: errno \(errno)")
        return (fds[0], fds[1])
    }

    private func writeByte(_ fd: Int32) {
        var byte: UInt8 = 1
        #expect(write(fd, &byte, 1) == 1, "writing one byte to fd \(fd) failed")
    }

    @Test("setInterest switches writability off and on without removing the source")
    func interestChangesInPlace() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let (a, b) = socketPair()
        defer { close(a); close(b) }
        let seen = Trace()
        let source = LoopFileSource(fd: a, events: .writable, label: "conn") { events in seen.add("\(events)") }
        #expect(loop.add(source, mode: .default) == .added)
        loop.run(mode: .default, timeout: 0)
        #expect(seen.all == ["[writable]"])

        try source.setInterest([])                       // back-pressure: nothing asked for
        #expect(source.interest == [])
        loop.run(mode: .default, timeout: 0)
        #expect(seen.all == ["[writable]"], "an fd with no interest must not be reported writable")
        #expect(loop.contains(source, mode: .default))

        try source.setInterest([.readable, .writable])
        writeByte(b)
        loop.run(mode: .default, timeout: 0)
        #expect(seen.all == ["[writable]", "[readable, writable]"])
    }

    @Test("a peer's shutdown reports readClosed, its close hangUp, each distinct from readable; an interest change on a closed fd throws")
    func hangUpIsItsOwnEvent() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let (a, b) = socketPair()
        defer { close(a) }
        let seen = Trace()
        let source = LoopFileSource(fd: a, events: [.readClosed], label: "idle") { events in seen.add("\(events)") }
        loop.add(source, mode: .default)
        loop.run(mode: .default, timeout: 0)
        #expect(seen.all.isEmpty)
        #expect(shutdown(b, Int32(SHUT_WR)) == 0)
        loop.run(mode: .default, timeout: 0)
        #expect(seen.all == ["[readClosed]"], "the peer's end of sending, not a hang-up (S9)")
        try source.setInterest([])
        // The rest of the shutdown, then the close: a child process that a concurrent test is
        // spawning holds a copy of every descriptor until its exec, so a close alone may leave
        // the socket (and so the hang-up) alive a moment longer; once in CI under load the pass
        // below came first.
        #expect(shutdown(b, Int32(SHUT_RD)) == 0)
        close(b)
        loop.run(mode: .default, timeout: 0)
        #expect(seen.all == ["[readClosed]", "[hangUp]"], "with no interest only the hang-up is reported")

        loop.remove(source, mode: .default)
        let other = LoopFileSource(fd: 1_000_000, events: .readable, label: "bogus") { _ in }
        let recorder = DiagnosticsRecorder(capturing: [.addRefused])
        let outcome = loop.add(other, mode: .default)
        #expect(outcome == .refused(.systemCall(SystemCallError(call: "epoll_ctl(ADD)", code: EBADF))))
        #expect(recorder.diagnostics(withID: .addRefused, item: "bogus").count == 1)
    }

    @Test("several ready fds are handled in one pass, in order; a busy fd starves none")
    func severalReadyInOnePass() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        var pairs: [(Int32, Int32)] = []
        defer { for (a, b) in pairs { close(a); close(b) } }
        let seen = Trace()
        for index in 0..<4 {
            let (a, b) = socketPair()
            pairs.append((a, b))
            // Reverse order values: the pass must hand them out by `order`, not by fd.
            loop.add(LoopFileSource(fd: a, events: .readable, order: 10 - index, label: "fd\(index)") { _ in
                seen.add("fd\(index)#\(loop.passCount)")
            }, mode: .default)
        }
        // fd0 stays readable forever (nobody reads it): a busy descriptor.
        for (_, b) in pairs { writeByte(b) }
        loop.run(mode: .default, timeout: 0)
        let firstPass = seen.all
        #expect(firstPass.count == 4, "all four ready fds in one polling pass: \(firstPass)")
        #expect(firstPass.map { String($0.prefix(3)) } == ["fd3", "fd2", "fd1", "fd0"])
        #expect(Set(firstPass.map { $0.split(separator: "#")[1] }).count == 1, "one pass: \(firstPass)")

        seen.reset()
        for _ in 0..<5 { loop.run(mode: .default, timeout: 0) }
        for index in 0..<4 {
            #expect(seen.all.filter { $0.hasPrefix("fd\(index)#") }.count == 5,
                    "fd\(index) must run on every pass while ready: \(seen.all)")
        }
    }
}
