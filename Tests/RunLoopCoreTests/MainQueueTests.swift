import Testing
import Dispatch
import CRunLoopShims
import PThreads
import RunLoopDiagnostics
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
    @Test("R4a L1 X4: Loop.main services DispatchQueue.main on the main thread (cases 18, 19), with the main-queue watch and without it",
          arguments: [false, true])
    func realMainQueue(withoutWatch: Bool) throws {
        let status = try runMainThreadProbe(environment: withoutWatch ? ["RLK_MAIN_THREAD_PROBE_NO_WATCH=1"] : [])
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        #expect(exited && code == 0, "probe failed: exit code \(code), raw status \(status) (details on stderr)")
    }
}

/// Re-executes the test binary with `RLK_MAIN_THREAD_PROBE=1` and `environment` added, so
/// `rlk_main_thread_probe` runs on the child's main thread before `main()`; the child's raw
/// wait status.
func runMainThreadProbe(environment: [String]) throws -> Int32 {
    var pid = pid_t()
    let path = "/proc/self/exe"
    var argv: [UnsafeMutablePointer<CChar>?] = [strdup(path), nil]
    defer { for p in argv { free(p) } }
    var env: [UnsafeMutablePointer<CChar>?] = [strdup("RLK_MAIN_THREAD_PROBE=1")] + environment.map { strdup($0) }
    var index = 0
    while let entry = environ[index] {
        env.append(strdup(entry))
        index += 1
    }
    env.append(nil)
    defer { for p in env { free(p) } }
    // The child starts with no signal blocked: a test thread may block some (SIGALRM, which a
    // probe's deadline needs), and a spawned process inherits the mask.
    var attributes = posix_spawnattr_t()
    try #require(posix_spawnattr_init(&attributes) == 0)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    try #require(posix_spawnattr_setsigmask(&attributes, &none) == 0)
    try #require(posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK)) == 0)
    let spawned = posix_spawn(&pid, path, nil, &attributes, &argv, &env)
    try #require(spawned == 0)
    var status: Int32 = 0
    var waited: pid_t
    repeat { waited = waitpid(pid, &status, 0) } while waited < 0 && errno == EINTR
    // Any other failure leaves `status` 0, which would read as a probe that passed.
    try #require(waited == pid, "waitpid failed: errno \(errno)")
    return status
}

/// The child's side of `MainQueueTests`: runs on the process's main thread, before `main()`.
@_cdecl("rlk_main_thread_probe")
public func rlkMainThreadProbe() {
    if getenv("RLK_MAIN_THREAD_PROBE_HANDLER") != nil { HandlerCallBackTests.mainQueueWatchProbe() }
    var failures = 0
    func check(_ ok: Bool, _ what: String, _ trace: [String]) {
        if !ok {
            failures += 1
            let line = "main-thread probe: \(what) failed; trace \(trace)\n"
            _ = line.utf8.withContiguousStorageIfAvailable { write(2, $0.baseAddress, $0.count) }
        }
    }
    // Whether this kernel offers the io_uring watch, asked before any fault is planned.
    let kernelHasWatch = kernelOffersReadinessRing()
    let withoutWatch = getenv("RLK_MAIN_THREAD_PROBE_NO_WATCH") != nil
    if withoutWatch { _ = rlk_fault_inject(Int32(RLK_CALL_RING_SETUP), ENOSYS, 0, 1) }
    // The fallback's notice and the planned epoll_wait failure below are expected: captured
    // and checked at the end, not printed.
    let recorder = DiagnosticsRecorder(capturing: [.mainQueuePolled, .waitFailed])
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

    // The main-queue watch: on when the kernel has it (and no fault refused it).
    check(loop.watchesMainQueueWithoutSystemCalls == (kernelHasWatch && !withoutWatch),
          "watch \(loop.watchesMainQueueWithoutSystemCalls), kernel \(kernelHasWatch), refused \(withoutWatch)", [])

    // A poke of the main queue after idle polling passes is seen by the very next polling pass.
    let delivered = PokeCount()
    for round in 1...500 {
        trace.reset()
        for _ in 0..<3 {
            let idle = loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true)
            check(idle == .timedOut, "idle poll \(round): \(idle)", trace.all)
        }
        DispatchQueue.main.async { delivered.count += 1 }
        let served = loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true)
        check(served == .handledSource && delivered.count == round, "poll after poke \(round): \(served), \(delivered.count) delivered", trace.all)
        if failures > 0 { break }
    }

    // Pokes from another thread while the main thread polls: none is lost.
    trace.reset()
    let posts = 2_000
    let arrived = PokeCount()
    let poster = startPThread {
        for _ in 0..<posts { DispatchQueue.main.async { arrived.count += 1 } }
    }
    let deadline = MonotonicClock.shared.now.nanoseconds + 10_000_000_000
    while arrived.count < posts && MonotonicClock.shared.now.nanoseconds < deadline {
        _ = loop.run(mode: .default, timeout: 0)
        trace.reset()
    }
    pthread_join(poster, nil)
    // The poster's last poke may land after its work already ran: a stale poke, which the
    // next poll consumes. Settle before the system-call check below.
    for _ in 0..<3 { _ = loop.run(mode: .default, timeout: 0) }
    check(arrived.count == posts, "\(arrived.count) of \(posts) main-queue blocks from another thread ran within 10 s of polling", [])

    // No system call on an idle polling pass with the watch: a planned epoll_wait failure is
    // never reached. Without it, the first idle poll reaches it (the mode then fails, so last).
    trace.reset()
    _ = rlk_fault_inject(Int32(RLK_CALL_EPOLL_WAIT), EBADF, 0, 1)
    var idleResults: [Loop.RunResult] = []
    for _ in 0..<200 { idleResults.append(loop.run(mode: .default, timeout: 0)) }
    let reached = rlk_fault_injected(Int32(RLK_CALL_EPOLL_WAIT))
    rlk_fault_clear()
    if loop.watchesMainQueueWithoutSystemCalls {
        check(reached == 0 && idleResults.allSatisfy { $0 == .timedOut }, "idle polls with the watch reached epoll_wait \(reached) times", [])
    } else {
        check(reached == 1 && idleResults.first == .finished, "idle polls without the watch reached epoll_wait \(reached) times, first \(idleResults.first.map { "\($0)" } ?? "none")", [])
    }
    let reported = recorder.stop()
    let polledNotices = reported.filter { $0.id == .mainQueuePolled }.count
    let waitFailures = reported.filter { $0.id == .waitFailed }.count
    let watching = loop.watchesMainQueueWithoutSystemCalls
    check(polledNotices == (watching ? 0 : 1), "loop.main-queue-polled reported \(polledNotices) times", [])
    check(waitFailures == (watching ? 0 : 1), "loop.wait-failed reported \(waitFailures) times", [])

    exit(failures == 0 ? 0 : 1)
}

/// Main-queue blocks counted on the main thread (the probe's passes run them there).
private final class PokeCount: @unchecked Sendable {  // touched only by the main thread's callouts and reads
    var count = 0
}

/// Whether `rlk_readiness_ring_create` works on this kernel, tried on an eventfd of its own.
private func kernelOffersReadinessRing() -> Bool {
    let fd = rlk_eventfd_create()
    guard fd >= 0 else { return false }
    defer { close(fd) }
    guard let ring = rlk_readiness_ring_create(fd) else { return false }
    rlk_readiness_ring_destroy(ring)
    return true
}
