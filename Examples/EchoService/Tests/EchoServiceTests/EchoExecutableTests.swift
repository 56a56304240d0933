@testable import EchoService
import RunLoopKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `runloopkit-echo` as a process: it serves, and SIGTERM shuts it down through its loop
/// source (stop accepting, send what it holds, lingering close), after which it exits 0 with
/// every cleanup run.
@Suite("EchoExecutable")
struct EchoExecutableTests {
    /// Reads from `fd` until `done` says the text is complete, end of file, or the deadline.
    private func readOutput(_ fd: Int32, into text: inout String, timeout: Duration, until done: (String) -> Bool) -> Bool {
        let deadline = MonotonicClock.shared.now.advanced(by: timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !done(text) {
            let left = MonotonicClock.shared.now.duration(to: deadline)
            guard left > .zero else { return false }
            var polled = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard case .success(let ready) = checked("poll", { poll(&polled, 1, Int32(left.components.seconds * 1000 + 1)) }) else { return false }
            if ready == 0 { continue }
            guard case .success(let count) = checked("read", { read(fd, &buffer, buffer.count) }), count > 0 else { return done(text) }
            text += String(decoding: buffer.prefix(count), as: UTF8.self)
        }
        return true
    }

    @Test("SIGTERM: the running service stops accepting, drains, closes and exits 0")
    func sigtermShutsDownGracefully() throws {
        let path = try #require(ChildProcess.sibling("runloopkit-echo"), "runloopkit-echo is not built next to the test bundle (swift build builds it)")
        var output: [Int32] = [-1, -1]
        #expect(pipe(&output) == 0)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_addclose(&actions, output[0])
        var pid: pid_t = 0
        let arguments = [path, "--lines", "--linger-timeout", "200"]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let status = posix_spawn(&pid, path, &actions, nil, &argv, environ)
        close(output[1])
        defer { close(output[0]) }
        try #require(status == 0, "posix_spawn failed: \(status)")

        var text = ""
        let listening = readOutput(output[0], into: &text, timeout: .seconds(20)) { $0.contains("\n") }
        guard listening, let portText = text.split(separator: "\n").first?.split(separator: ":").last, let port = UInt16(portText) else {
            kill(pid, SIGKILL)
            var ignored: Int32 = 0
            waitpid(pid, &ignored, 0)
            Issue.record("runloopkit-echo did not print its port within 20 s; printed: \(text)")
            return
        }

        // One line client: a full line comes back; a partial line waits in the read buffer.
        let client = try BlockingClient(port: port, timeout: .seconds(10))
        try client.send("hello\nwor")
        #expect(client.receive(6) == "hello\n", "the complete line came back, the partial one waits")

        #expect(kill(pid, SIGTERM) == 0)
        let ended = readOutput(output[0], into: &text, timeout: .seconds(20)) { $0.contains("stopped:") && $0.hasSuffix("\n") }
        var exitStatus: Int32 = 0
        if !ended { kill(pid, SIGKILL) }
        #expect(waitpid(pid, &exitStatus, 0) == pid)
        #expect(ended, "runloopkit-echo did not stop within 20 s of SIGTERM; printed: \(text)")
        #expect(exitStatus == 0, "exit status \(exitStatus); printed: \(text)")
        #expect(text.contains("accepted 1, closed 1"), "\(text)")
        #expect(text.contains("cleanups 1 (duplicates 0), live 0"), "\(text)")
        #expect(text.contains("shutdown 1"), "the open connection was closed by the shutdown: \(text)")
        #expect(client.readToEnd() == ([], .endOfFile), "the client did not see the connection end with an end of file")
    }
}
