import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Loop.main under GLib's main loop: a process's main thread runs GLib's main loop on the
/// default context and GLib drives Loop.main (`glib-main-probe`, built with the tests). A test
/// process's main thread is XCTest's or Swift Testing's, so the probe is a process of its own.
@Suite("Loop.main under GLib")
struct MainLoopUnderGLibTests {
    @Test("@MainActor jobs, DispatchQueue.main, a timer and a block run in the same order hosted in GLib as in Loop.main's own run; g_main_loop_run serves a job sent from another thread; an idle second is one GLib sleep")
    func mainLoopHostedInGLib() throws {
        let run = try ProbeProcess.run("glib-main-probe")
        #expect(run.exitStatus == 0 && !run.killedBySignal, "\(run.output)")
        #expect(run.lines == [
            "order, native: E BT BS BW AW timer block BT BS actor queue X",
            "order, hosted in GLib: E BT BS BW AW timer block BT BS actor queue X",
            "g_main_loop_run: job from another thread run stopped",
            "idle second: 1 GLib sleep(s), 0 loop dispatch(es)",
        ], "\(run.output)")
    }
}

/// Runs an executable built next to this test binary; 30 s at most, stdout and stderr together.
enum ProbeProcess {
    struct Outcome {
        var output = ""
        var exitStatus: Int32 = -1
        var killedBySignal = false
        var lines: [String] { output.split(separator: "\n").map(String.init) }
    }

    static func run(_ name: String, _ arguments: [String] = []) throws -> Outcome {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        try #require(length > 0, "readlink(/proc/self/exe) failed")
        let me = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let path = String(me[..<me.lastIndex(of: "/")!]) + "/" + name
        try #require(access(path, X_OK) == 0, "\(path) is missing: it is built with the tests")
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        // A sanitizer build's probe gets the test run's sanitizer settings.
        let passed = ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"].compactMap { name -> String? in
            getenv(name).map { name + "=" + String(cString: $0) }
        }
        var environment: [UnsafeMutablePointer<CChar>?] = (["SWIFT_BACKTRACE=enable=no"] + passed).map { strdup($0) } + [nil]
        defer { for pointer in environment { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, path, &actions, nil, &argv, &environment)
        close(ends[1])
        defer { close(ends[0]) }
        try #require(spawned == 0, "posix_spawn failed: \(spawned)")
        var outcome = Outcome()
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = time(nil) + 30
        while time(nil) < deadline {
            var record = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
            let ready = poll(&record, 1, 1000)
            if ready <= 0 { continue }
            let count = read(ends[0], &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        if time(nil) >= deadline {
            kill(pid, SIGKILL)
            Issue.record("\(name) \(arguments) did not finish within 30 s")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        outcome.output = String(decoding: bytes, as: UTF8.self)
        outcome.killedBySignal = (status & 0x7f) != 0
        outcome.exitStatus = (status >> 8) & 0xff
        return outcome
    }
}
