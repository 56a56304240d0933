import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `@MainActor` code, `DispatchQueue.main` work and loop timers on `Loop.main`, in a process
/// whose main thread runs the main loop: `swift test` keeps the main thread in
/// `dispatch_main()`, so the suite runs the `mainactor-probe` executable (built with the tests,
/// beside this test binary) and compares what it prints, step by step, with CF's order.
@Suite("MainActorOnMainLoop")
struct MainActorOnMainLoopTests {
    @Test("@MainActor jobs are main-queue work: a timer's block runs at the end of its pass, then the fast path drains actor and queue work in FIFO order (B3, L-a, X4); #997's shape works")
    func dispatchMainExecutor() throws {
        let run = try runProbe([])
        #expect(run.exitStatus == 0, "\(run.output)")
        #expect(run.lines == [
            "fd: E BT BS BW AW fd X bytes=1",
            "order: E BT BS BW AW timer block BT BS actor queue X",
            "997: timer fired",
        ])
    }

    @Test("with Loop.main as the main executor (SPI), a @MainActor job is a block-step job: FIFO with the block, before the main queue")
    func mainLoopExecutor() throws {
        let run = try runProbe(["--main-executor"])
        #expect(run.exitStatus == 0, "\(run.output)")
        #expect(run.lines == [
            "fd: E BT BS BW AW fd X bytes=1",
            "order: E BT BS BW AW timer actor block BT BS queue X",
            "997: timer fired",
        ])
    }

    @Test("a @MainActor callout reached on another loop's thread stops the process, naming the item")
    func wrongThreadIsCaught() throws {
        let run = try runProbe(["--wrong-thread"])
        #expect(run.killedBySignal, "exit status \(run.exitStatus): \(run.output)")
        #expect(run.output.contains("LoopSource 'misplaced' has a @MainActor callout but was called on thread"))
        #expect(run.output.contains("add it to Loop.main only"))
    }
}

@Suite("OwnerThreadClosures off-thread")
struct OwnerThreadClosuresOffThreadTests {
    @Test("performOnOwnerThread called off the loop's thread stops the process, naming both threads")
    func performOffThreadIsCaught() throws {
        let run = try runProbe(["--perform-off-thread"])
        #expect(run.killedBySignal, "exit status \(run.exitStatus): \(run.output)")
        #expect(run.output.contains("Loop.performOnOwnerThread called on thread"))
        #expect(run.output.contains("but this loop belongs to thread"))
    }
}

/// What a probe run printed (stdout and stderr together) and how it ended.
private struct ProbeRun {
    var output = ""
    var exitStatus: Int32 = -1
    var killedBySignal = false
    var lines: [String] { output.split(separator: "\n").map(String.init) }
}

/// Runs `mainactor-probe` (next to this test binary) with `arguments`; 30 s at most.
private func runProbe(_ arguments: [String]) throws -> ProbeRun {
    var buffer = [CChar](repeating: 0, count: 4096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    try #require(length > 0, "readlink(/proc/self/exe) failed")
    let me = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let path = String(me[..<me.lastIndex(of: "/")!]) + "/mainactor-probe"
    guard access(path, X_OK) == 0 else {
        Issue.record("\(path) is missing: it is built with the tests")
        return ProbeRun()
    }

    var ends: [Int32] = [0, 0]
    try #require(pipe(&ends) == 0)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
    posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
    posix_spawn_file_actions_addclose(&actions, ends[0])
    var argv: [UnsafeMutablePointer<CChar>?] = ([String(path)] + arguments).map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    // No crash report (it would take seconds): the message is the fatal error's line.
    // A sanitizer build's probe gets the test run's sanitizer settings (e.g. CI's ASan step
    // turns leak detection off for the test processes).
    let sanitizerVariables: [String] = ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"]
    let sanitizerSettings: [String] = sanitizerVariables.compactMap { (name: String) -> String? in
        guard let value = getenv(name) else { return nil }
        return name + "=" + String(cString: value)
    }
    var env: [UnsafeMutablePointer<CChar>?] = (["SWIFT_BACKTRACE=enable=no"] + sanitizerSettings).map { strdup($0) } + [nil]
    defer { for p in env { free(p) } }
    var pid = pid_t()
    let spawned = posix_spawn(&pid, path, &actions, nil, &argv, &env)
    close(ends[1])
    defer { close(ends[0]) }
    guard spawned == 0 else { Issue.record("posix_spawn failed: \(spawned)"); return ProbeRun() }

    var run = ProbeRun()
    var bytes: [UInt8] = []
    let deadline = time(nil) + 30
    var chunk = [UInt8](repeating: 0, count: 4096)
    while time(nil) < deadline {
        var pollFD = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        let ready = poll(&pollFD, 1, 1000)
        if ready < 0 && errno == EINTR { continue }
        if ready <= 0 { continue }
        let count = read(ends[0], &chunk, chunk.count)
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        bytes += chunk[..<count]
    }
    if time(nil) >= deadline {
        kill(pid, SIGKILL)
        Issue.record("mainactor-probe \(arguments) did not finish within 30 s")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    run.output = String(decoding: bytes, as: UTF8.self)
    run.killedBySignal = (status & 0x7f) != 0
    run.exitStatus = (status >> 8) & 0xff
    return run
}
