import Testing
import Dispatch
import CRunLoopShims
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// The real `DispatchQueue.main` path of `Loop.main` (R4a, L1, X4, cases 18 and 19 with the
/// genuine main queue).
///
/// Under `swift test` the main thread has handed the main queue to `dispatch_main()`, so the
/// test re-executes its own binary with `RLK_MAIN_THREAD_PROBE=1`: CRunLoopShims' load-time
/// constructor then calls `rlk_main_thread_probe` (below) on the main thread before `main()`,
/// and the child's exit status reports the result.
@Suite("MainQueue")
struct MainQueueTests {
    @Test("R4a L1 X4: Loop.main services DispatchQueue.main on the main thread (cases 18, 19)")
    func realMainQueue() throws {
        var pid = pid_t()
        let path = "/proc/self/exe"
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup(path), nil]
        defer { for p in argv { free(p) } }
        var env: [UnsafeMutablePointer<CChar>?] = [strdup("RLK_MAIN_THREAD_PROBE=1")]
        var index = 0
        while let entry = environ[index] {
            env.append(strdup(entry))
            index += 1
        }
        env.append(nil)
        defer { for p in env { free(p) } }
        let spawned = posix_spawn(&pid, path, nil, nil, &argv, &env)
        try #require(spawned == 0)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        #expect(exited && code == 0, "probe failed: exit code \(code), raw status \(status) (details on stderr)")
    }
}

/// The child's side of `MainQueueTests`: runs on the process's main thread, before `main()`.
@_cdecl("rlk_main_thread_probe")
public func rlkMainThreadProbe() {
    var failures = 0
    func check(_ ok: Bool, _ what: String, _ trace: [String]) {
        if !ok {
            failures += 1
            let line = "main-thread probe: \(what) failed; trace \(trace)\n"
            _ = line.utf8.withContiguousStorageIfAvailable { write(2, $0.baseAddress, $0.count) }
        }
    }
    let loop = Loop.main
    check(rlk_is_main_thread() == 1 && loop === Loop.current, "Loop.current is Loop.main", [])
    let trace = tracing(loop)

    // R4a: the default mode of the main loop is never empty on the main thread.
    check(!loop.isFinished(mode: .default), "R4a default mode not finished", [])

    // case 18: DispatchQueue.main work is serviced after a wait, and counts as handled.
    DispatchQueue.main.async { trace.add("q") }
    var result = loop.run(mode: .default, timeout: 5, returnAfterSourceHandled: true)
    check(result == .handledSource && trace.all == ["E", "BT", "BS", "BW", "AW", "q", "X"], "case18 \(result)", trace.all)

    // loop.submit on the main loop is DispatchQueue.main (and always accepted).
    trace.reset()
    let accepted = loop.submit { trace.add("viaLoopSubmit") }
    result = loop.run(mode: .default, timeout: 5, returnAfterSourceHandled: true)
    check(accepted && result == .handledSource && trace.all == ["E", "BT", "BS", "BW", "AW", "viaLoopSubmit", "X"],
          "loop.submit", trace.all)

    // R3, R4a: a non-common, observer-only mode is finished even with main-queue work pending.
    trace.reset()
    let other: Loop.Mode = "ProbeOther"
    recordActivities(loop, trace, mode: other)
    DispatchQueue.main.async { trace.add("later") }
    result = loop.run(mode: other, timeout: 5)
    check(result == .finished && trace.all == [], "R3/R4a non-common mode", trace.all)

    // R4a, X4: a nested run inside main-queue work finishes at once (R4a's "not inside a main-queue
    // callout"); "later" is drained by the outer run first.
    trace.reset()
    DispatchQueue.main.async {
        trace.add("outer")
        DispatchQueue.main.async { trace.add("inner") }
        trace.add("nested:\(loop.run(mode: .default, timeout: 5))")
    }
    result = loop.run(mode: .default, timeout: 5, returnAfterSourceHandled: true)
    check(result == .handledSource && trace.all == ["E", "BT", "BS", "BW", "AW", "later", "outer", "nested:finished", "X"],
          "R4a/X4 nested run", trace.all)
    trace.reset()
    result = loop.run(mode: .default, timeout: 5, returnAfterSourceHandled: true)
    check(result == .handledSource && trace.all == ["E", "BT", "BS", "BW", "AW", "inner", "X"], "R4a/X4 deferred inner", trace.all)

    // case 19: main-queue work queued by a timer takes the fast path (no BW/AW before it).
    trace.reset()
    let timer = try! LoopTimer(after: 0.001, clock: loop.clock, label: "timer") { _ in
        trace.add("timer")
        DispatchQueue.main.async { trace.add("q") }
    }
    loop.add(timer, mode: .default)
    result = loop.run(mode: .default, timeout: 5, returnAfterSourceHandled: true)
    check(result == .handledSource && trace.all == ["E", "BT", "BS", "BW", "AW", "timer", "BT", "BS", "q", "X"],
          "case19 fast path", trace.all)

    exit(failures == 0 ? 0 : 1)
}
