#if canImport(Glibc)
import Glibc
#endif

/// Runs a sibling executable of the test bundle (built with the tests) with a deadline.
enum ChildProcess {
    /// `name` in the directory of the running test bundle, when it is there and executable.
    static func sibling(_ name: String) -> String? {
        var target = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &target, 4095)
        guard count > 0 else { return nil }
        let path = String(decoding: target.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let candidate = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") + "/" + name
        return access(candidate, X_OK) == 0 ? candidate : nil
    }

    /// The exit status and output (standard output and error) of `arguments`; nil, with the
    /// process killed, when it did not end within `timeout`.
    static func run(_ arguments: [String], timeout: Duration) -> (status: Int32, output: String)? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return (-1, "pipe failed: errno \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        close(ends[1])
        defer { close(ends[0]) }
        guard spawned == 0 else { return (-1, "posix_spawn failed: \(spawned)") }

        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = milliseconds() + Int64(timeout.components.seconds) * 1000
        while true {
            let left = deadline - milliseconds()
            guard left > 0 else {
                kill(pid, SIGKILL)
                var ignored: Int32 = 0
                while waitpid(pid, &ignored, 0) < 0 && errno == EINTR {}
                return nil
            }
            var polled = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
            let ready = poll(&polled, 1, Int32(min(left, 1000)))
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { break }
            if ready == 0 { continue }
            let count = read(ends[0], &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            output += buffer.prefix(count)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return (-1, String(decoding: output, as: UTF8.self)) }
        }
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (exitStatus, String(decoding: output, as: UTF8.self))
    }

    private static func milliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
