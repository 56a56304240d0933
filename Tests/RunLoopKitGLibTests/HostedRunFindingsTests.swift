import LoopInstruments
import RunLoopCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Two defects the hosted differential found in the core's hosted run (`Loop+Hosting.swift`),
/// each kept as a test with the smallest host that follows H1–H4. Both came from `prepare()`:
/// 1. it left a wake-up event that a run of another mode had left in the mode's set (the wake-up
///    descriptor is edge-triggered and reaches every set; `dispatch()` polls "quietly" and never
///    took it), so the descriptor stayed readable and a host spun; `takeStaleReadiness` now
///    takes such events before the host is told to sleep;
/// 2. it answered `.no` for a pending wake-up, so the pass had no BeforeWaiting and AfterWaiting,
///    where the loop's own wait sleeps and returns at once; it now answers a sleep (H2).
@Suite("Hosted run findings")
struct HostedRunFindingsTests {
    /// A host of the protocol's kind on a virtual clock: prepare; for a wait, BeforeWaiting,
    /// poll the descriptor without waiting and, when nothing is ready, move the clock to the
    /// deadline (as the loop's own virtual wait does), AfterWaiting; dispatch. Bounded by
    /// `passes`.
    static func drive(_ run: HostedRun, clock: VirtualClock, passes: Int) -> (result: Loop.RunResult?, readableWaits: Int) {
        var readableWaits = 0
        for _ in 0..<passes where run.result == nil {
            let wait = run.prepare()
            if wait != .no {
                run.hostWillSleep()
                var record = pollfd(fd: run.descriptor, events: Int16(POLLIN), revents: 0)
                if poll(&record, 1, 0) > 0 {
                    readableWaits += 1
                } else if case .until(let instant) = wait {
                    clock.advance(to: instant)
                }
                run.hostDidWake()
            }
            _ = run.dispatch()
        }
        return (run.result, readableWaits)
    }

    @Test("A wake-up event an earlier run left in another mode's set does not keep a hosted run's descriptor readable")
    func staleWakeUpInAnotherModeDoesNotKeepDescriptorReadable() {
        let clock = VirtualClock(start: LoopInstant(nanoseconds: 1_000_000_000))
        let loop = Loop(clock: clock)
        defer { loop.tearDown() }
        let first = Loop.Mode("first"), second = Loop.Mode("second")
        let sources = [LoopSource(label: "keeps first") {}, LoopSource(label: "keeps second") {}]
        loop.add(sources[0], mode: first)
        loop.add(sources[1], mode: second)
        defer { sources.forEach { $0.invalidate() } }
        // A hosted run of `first` is stopped in its pass: the stop's wake-up is written (H3) and
        // its edge-triggered event reaches every mode's set; the run ends without a wait.
        let stopped = loop.beginHostedRun(mode: first)
        _ = stopped.prepare()
        loop.stop()
        #expect(stopped.dispatch() == .stopped)
        // A hosted run of `second` with nothing to do: its host must be able to sleep.
        let idle = loop.beginHostedRun(mode: second, timeout: .seconds(1))
        let outcome = Self.drive(idle, clock: clock, passes: 5)
        // With the stale event left in `second`'s set, every wait found the descriptor readable,
        // the clock never moved, and a host spun: 5 of 5, and the run had not timed out.
        #expect(outcome.readableWaits == 0, "the descriptor was readable at \(outcome.readableWaits) of 5 waits")
        #expect(outcome.result == .timedOut)
        idle.end()
    }

    @Test("A wake-up pending at the end of a pass's top gives BeforeWaiting and AfterWaiting, as the loop's own run does")
    func pendingWakeUpStillSleeps() {
        func trace(hosted: Bool) -> [String] {
            let clock = VirtualClock(start: LoopInstant(nanoseconds: 1_000_000_000))
            let loop = Loop(clock: clock)
            defer { loop.tearDown() }
            let source = LoopSource(label: "keeps the mode") {}
            loop.add(source, mode: .default)
            var woke = false
            let waker = LoopObserver(activities: .beforeSources, label: "waker") { _, _ in
                guard !woke else { return }
                woke = true
                loop.wakeUp()
            }
            loop.add(waker, mode: .default)
            let recorder = TraceRecorder()
            recorder.attach(to: loop)
            let logger = recorder.observeActivities(on: loop)
            defer {
                source.invalidate()
                [waker, logger].forEach { $0.invalidate() }
            }
            if hosted {
                _ = Self.drive(loop.beginHostedRun(timeout: .milliseconds(10)), clock: clock, passes: 10)
            } else {
                _ = loop.run(mode: .default, timeout: .milliseconds(10))
            }
            let activities: Set = ["E", "BT", "BS", "BW", "AW", "X"]
            return recorder.tokens().filter { activities.contains($0) }
        }
        let native = trace(hosted: false)
        #expect(native == ["E", "BT", "BS", "BW", "AW", "BT", "BS", "BW", "AW", "X"])
        // prepare() used to answer `.no` for the pending wake-up: the first pass sent neither.
        #expect(trace(hosted: true) == native)
    }
}
