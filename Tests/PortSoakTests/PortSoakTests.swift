import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The short form of the port soak (issue 13; issue 28: with the library's defaults), run as CI
/// runs the tool: the `port-soak` executable as a process of its own, so other suites running in
/// parallel do not move its resident set. The 60 s run is `swift run -c release port-soak`.
@Suite("PortSoak")
struct PortSoakTests {
    @Test("4 producers for 2 s into a port with the library's defaults: nothing lost, the queue drains, RSS flat")
    func defaultPortHoldsUnderFourProducers() throws {
        let path = try #require(SoakProcess.siblingExecutable("port-soak"), "port-soak is not built next to the test bundle")
        let run = try #require(try SoakProcess.run([path, "--seconds", "2", "--producers", "4"], timeout: .seconds(60)),
                               "port-soak did not finish within 60 s")
        #expect(run.status == 0, "exit status \(run.status): \(run.output)")
        let summary = try #require(run.output.split(separator: "\n").last.map(String.init))
        #expect(summary.contains("capacity 1024, 1 per pass"), "the library's defaults: \(summary)")
        #expect(summary.contains("(nothing lost)"), "\(summary)")
        // Unbounded, 2 s of producers outrunning one consumer queued hundreds of MiB (issue 13);
        // bounded at 1024 messages, the queue itself is under 100 KiB. Under AddressSanitizer
        // freed memory waits in its quarantine (256 MiB by default), so RSS says nothing there.
        if dlsym(nil, "__asan_init") == nil {   // nil: RTLD_DEFAULT, every loaded object
            let start = try #require(SoakProcess.mebibytes(after: "RSS start ", in: summary))
            let maximum = try #require(SoakProcess.mebibytes(after: "max ", in: summary))
            #expect(maximum - start < 32, "\(summary)")
        }
    }
}

/// Runs a sibling executable of the test bundle with a deadline and collects its output.
enum SoakProcess {
    /// `name` in the directory of the running test bundle, when it is there and executable.
    static func siblingExecutable(_ name: String) -> String? {
        var target = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &target, 4095)
        guard count > 0 else { return nil }
        let path = String(decoding: target.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let candidate = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") + "/" + name
        return access(candidate, X_OK) == 0 ? candidate : nil
    }

    /// The exit status and standard output of `arguments`; nil (the process killed) when it did
    /// not end within `timeout`.
    static func run(_ arguments: [String], timeout: Duration) throws -> (status: Int32, output: String)? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SoakProcessError.failed("pipe", errno) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        close(ends[1])
        defer { close(ends[0]) }
        guard spawned == 0 else { throw SoakProcessError.failed("posix_spawn", spawned) }

        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var clock = timespec()
        clock_gettime(CLOCK_MONOTONIC, &clock)
        let deadline = Int64(clock.tv_sec) * 1000 + Int64(clock.tv_nsec) / 1_000_000 + Int64(timeout.components.seconds) * 1000
        while true {
            clock_gettime(CLOCK_MONOTONIC, &clock)
            let left = deadline - (Int64(clock.tv_sec) * 1000 + Int64(clock.tv_nsec) / 1_000_000)
            guard left > 0 else {
                kill(pid, SIGKILL)
                var ignored: Int32 = 0
                while waitpid(pid, &ignored, 0) < 0 && errno == EINTR {}
                return nil
            }
            var polled = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
            let ready = poll(&polled, 1, Int32(min(left, 1000)))
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { throw SoakProcessError.failed("poll", errno) }
            if ready == 0 { continue }
            let count = read(ends[0], &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            output += buffer.prefix(count)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw SoakProcessError.failed("waitpid", errno) }
        }
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (exitStatus, String(decoding: output, as: UTF8.self))
    }

    /// The number before " MiB" that follows `label` in `text`.
    static func mebibytes(after label: String, in text: String) -> Double? {
        let characters = Array(text), pattern = Array(label)
        guard pattern.count <= characters.count else { return nil }
        for start in 0...(characters.count - pattern.count) where Array(characters[start..<start + pattern.count]) == pattern {
            return Double(String(characters[(start + pattern.count)...].prefix { $0 == "." || $0.isNumber }))
        }
        return nil
    }
}

enum SoakProcessError: Error, CustomStringConvertible {
    case failed(String, Int32)
    var description: String {
        switch self {
        case .failed(let call, let code): "\(call) failed: errno \(code)"
        }
    }
}
