#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An executable run to its end as a child process, with a deadline: what the tests use to run
/// the probes and tools built beside them (a process of its own gets its own main thread, or
/// its own resident set, which a test inside `swift test`'s process cannot have).
package enum ChildProcess {
    /// What a child printed and how it ended.
    package struct Outcome: Sendable {
        /// Its standard output, with its standard error when that was captured too.
        package var output = ""
        /// Its exit status, or -1 when a signal ended it.
        package var exitStatus: Int32 = -1
        /// A signal ended it (a trap, a kill).
        package var killedBySignal = false
        /// It was still running at the deadline and was killed.
        package var timedOut = false

        /// `output`, one element per line.
        package var lines: [String] { output.split(separator: "\n").map(String.init) }
    }

    /// The environment a child gets.
    package enum Environment: Sendable {
        /// This process's environment.
        case inherited
        /// Only what makes a probe's output its own: no crash report (it takes seconds and would
        /// be read as output; a fatal error's message stays), and this process's sanitizer
        /// settings, so that a sanitizer build's child runs as the tests do.
        case probe
    }

    /// What went wrong before the child could be waited for.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// `name` in the directory of the running executable (the test bundle), if it is there and
    /// executable: SwiftPM builds a test target's executable dependencies beside it.
    package static func besideThisExecutable(_ name: String) -> String? {
        var target = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &target, target.count - 1)
        guard count > 0 else { return nil }
        let me = String(decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = me.lastIndex(of: "/") else { return nil }
        let path = String(me[...slash]) + name
        return access(path, X_OK) == 0 ? path : nil
    }

    /// Runs `path` with `arguments` until it ends or `timeout` passes (then it is killed, and
    /// `timedOut` is set). Its standard output is collected, with its standard error when
    /// `capturingStandardError` (else that goes where this process's goes).
    package static func run(_ path: String, _ arguments: [String] = [], environment: Environment = .probe,
                           capturingStandardError: Bool = true, timeout: Duration = .seconds(30)) throws(Failure) -> Outcome {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw failure("pipe", errno) }
        defer { close(ends[0]) }
        let pid: pid_t
        do {
            defer { close(ends[1]) }
            pid = try spawn(path, arguments, environment, output: ends[1], closing: ends[0], capturingStandardError)
        }
        var outcome = Outcome()
        let collected: [UInt8]?
        do {
            collected = try readUntilEnd(ends[0], deadline: monotonicMilliseconds() + milliseconds(timeout))
        } catch {
            kill(pid, SIGKILL)   // the child must not outlive the test
            _ = try? waitForExit(pid)
            throw error
        }
        guard let bytes = collected else {
            kill(pid, SIGKILL)
            _ = try waitForExit(pid)
            outcome.timedOut = true
            outcome.killedBySignal = true
            return outcome
        }
        let status = try waitForExit(pid)
        outcome.output = String(decoding: bytes, as: UTF8.self)
        outcome.killedBySignal = (status & 0x7f) != 0
        outcome.exitStatus = outcome.killedBySignal ? -1 : (status >> 8) & 0xff
        return outcome
    }

    // MARK: The steps

    private static func spawn(_ path: String, _ arguments: [String], _ environment: Environment,
                              output: Int32, closing readEnd: Int32, _ withStandardError: Bool) throws(Failure) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        try check("posix_spawn_file_actions_init", posix_spawn_file_actions_init(&actions))
        defer { posix_spawn_file_actions_destroy(&actions) }
        try check("posix_spawn_file_actions_adddup2", posix_spawn_file_actions_adddup2(&actions, output, 1))
        if withStandardError {
            try check("posix_spawn_file_actions_adddup2", posix_spawn_file_actions_adddup2(&actions, output, 2))
        }
        try check("posix_spawn_file_actions_addclose", posix_spawn_file_actions_addclose(&actions, readEnd))
        var argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let spawned: Int32
        switch environment {
        case .inherited:
            spawned = posix_spawn(&pid, path, &actions, nil, &argv, environ)
        case .probe:
            let sanitizers = ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"].compactMap { name -> String? in
                getenv(name).map { name + "=" + String(cString: $0) }
            }
            var variables = (["SWIFT_BACKTRACE=enable=no"] + sanitizers).map { strdup($0) } + [nil]
            defer { for pointer in variables { free(pointer) } }
            spawned = posix_spawn(&pid, path, &actions, nil, &argv, &variables)
        }
        try check("posix_spawn(\(path))", spawned)
        return pid
    }

    /// Everything written to `descriptor` until its last writer closes it; nil once `deadline`
    /// (monotonic milliseconds) passes.
    private static func readUntilEnd(_ descriptor: Int32, deadline: Int64) throws(Failure) -> [UInt8]? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = deadline - monotonicMilliseconds()
            guard left > 0 else { return nil }
            var record = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&record, 1, Int32(min(left, 1000)))
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { throw failure("poll", errno) }
            if ready == 0 { continue }
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw failure("read", errno) }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
    }

    private static func waitForExit(_ pid: pid_t) throws(Failure) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw failure("waitpid", errno) }
        }
        return status
    }

    /// The posix_spawn family returns its error number instead of setting errno.
    private static func check(_ call: String, _ result: Int32) throws(Failure) {
        guard result == 0 else { throw failure(call, result) }
    }

    private static func failure(_ call: String, _ code: Int32) -> Failure {
        Failure(description: "\(call) failed: \(String(cString: strerror(code))) (errno \(code))")
    }

    private static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        // CLOCK_MONOTONIC always exists on Linux: a failure would be a broken libc.
        precondition(clock_gettime(CLOCK_MONOTONIC, &now) == 0, "clock_gettime(CLOCK_MONOTONIC) failed")
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
