import Testing
import PThreads
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// A loop driven by a host event loop (H1–H4): here a minimal host that polls the run's
/// descriptor with poll(2), as libuv or GLib would.
@Suite("Hosted run")
struct HostedRunTests {
    @Test("H2: BeforeWaiting and AfterWaiting only around the host's real sleeps; the order of a native run otherwise")
    func activitiesFollowTheHostsSleeps() {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let trace = tracing(loop)
        let source = recordingSource("source", trace)
        loop.add(source, mode: .default)
        source.signal()
        let run = loop.beginHostedRun(timeout: .milliseconds(30))
        let host = PollHost(run)
        #expect(host.iterate() == nil)   // the signalled source: a polling pass, no sleep
        #expect(host.iterate() == nil || run.result == .timedOut)
        while run.result == nil { _ = host.iterate() }
        #expect(run.result == .timedOut)
        #expect(trace.all.prefix(5) == ["E", "BT", "BS", "source", "BT"])
        #expect(trace.all.last == "X")
        // Every BeforeWaiting is followed by its AfterWaiting, and only after a host sleep.
        let pairs = zip(trace.all, trace.all.dropFirst()).filter { $0.0 == "BW" }
        #expect(!pairs.isEmpty && pairs.allSatisfy { $0.1 == "AW" })
        #expect(host.sleeps == pairs.count)
    }

    @Test("H1 H3: a job enqueued from another thread while the host sleeps makes the descriptor readable and runs in the next dispatch")
    func jobFromAnotherThreadWakesTheHost() async {
        let done = Flag()
        let started = Flag()
        let result = Locked<Loop.RunResult?>(nil)
        let ranOnLoopThread = Locked(false)
        let thread = startPThread(name: "host") {
            let loop = Loop.current
            loop.add(LoopSource {}, mode: .default)   // keeps the mode from being empty
            let run = loop.beginHostedRun()
            let host = PollHost(run)
            started.set()
            let worker = BackgroundThread {
                loop.perform(inMode: .default) {
                    ranOnLoopThread.withLock { $0 = loop.isOwnerThread }
                    loop.stop()
                }
                loop.wakeUp()
            }
            while run.result == nil { _ = host.iterate(limit: .seconds(10)) }
            worker.join()
            result.withLock { $0 = run.result }
            done.set()
        }
        started.wait("the host thread did not start")
        done.wait("the hosted run did not end after the other thread's block and stop()")
        pthread_join(thread, nil)
        #expect(result.withLock { $0 } == .stopped)
        #expect(ranOnLoopThread.withLock { $0 })
    }

    @Test("H2: prepare() tells the host the mode's next timer; the timer fires in the dispatch after it")
    func prepareReportsTheNextTimer() throws {
        let clock = VirtualClock()
        let loop = Loop(clock: clock)
        defer { loop.tearDown() }
        let fired = Locked(0)
        let timer = try LoopTimer(after: .milliseconds(50), clock: clock) { _ in fired.withLock { $0 += 1 } }
        loop.add(timer, mode: .default)
        let run = loop.beginHostedRun(timeout: .seconds(1))
        guard case .until(let instant) = run.prepare() else {
            Issue.record("prepare() did not report the timer")
            run.end()
            return
        }
        #expect(instant == timer.nextFireDate)
        run.hostWillSleep()
        clock.advance(to: instant)          // the host's sleep, on the virtual clock
        run.hostDidWake()
        #expect(run.dispatch() == .finished)   // the one-shot timer fired; the mode is empty
        #expect(fired.withLock { $0 } == 1)
    }

    @Test("H3: a wakeUp() on the host's thread is written, so a host about to block wakes")
    func ownThreadWakeUpIsWritten() {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        loop.add(LoopSource {}, mode: .default)
        let run = loop.beginHostedRun()
        #expect(run.prepare() == .indefinitely)
        loop.wakeUp()   // host code on the loop's thread, after the prepare
        var descriptor = pollfd(fd: run.descriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&descriptor, 1, 0) == 1, "the descriptor is not readable after the wake-up")
        #expect(run.dispatch() == nil)
        #expect(run.end() == .stopped)
    }

    @Test("R3 L0: an empty mode gives a run that has ended with .finished, no Entry or Exit")
    func emptyModeEndsAtOnce() {
        let loop = Loop(clock: VirtualClock())
        defer { loop.tearDown() }
        let trace = tracing(loop)
        let run = loop.beginHostedRun()
        #expect(run.result == .finished)
        #expect(run.prepare() == .no)
        #expect(run.descriptor == -1)
        #expect(trace.all.isEmpty)
    }
}

/// A host event loop reduced to its iteration: prepare, poll the run's descriptor (blocking
/// when the run allows it), dispatch.
final class PollHost {
    let run: HostedRun
    private(set) var sleeps = 0

    init(_ run: HostedRun) { self.run = run }

    /// One iteration; the run's result when it ended.
    func iterate(limit: Duration = .seconds(10)) -> Loop.RunResult? {
        let timeout: Int32
        switch run.prepare() {
        case .no:
            timeout = 0
        case .until(let instant):
            let now = MonotonicClock.shared.now
            timeout = Int32(clamping: max(0, now.duration(to: instant).components.seconds * 1000
                + now.duration(to: instant).components.attoseconds / 1_000_000_000_000_000 + 1))
        case .indefinitely:
            timeout = Int32(limit.components.seconds * 1000)
        }
        if let result = run.result { return result }
        if timeout != 0 {
            sleeps += 1
            run.hostWillSleep()
        }
        var descriptor = pollfd(fd: run.descriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, timeout)
        if timeout != 0 { run.hostDidWake() }
        return run.dispatch()
    }
}
