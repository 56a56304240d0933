import RunLoopTesting
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The harness's driving methods: turns, settling, virtual time, and the inputs it owns. The
/// expected sequences follow the pass of Docs/Rules.md (L3, L-a, L-b, S2, S8, B3).
@Suite struct HarnessTests {
    private let calloutsAndLogs = LoopStepSelection(kinds: [.callouts, .logs])

    @Test func aTurnRunsWhatIsDueAndEndsAtBeforeWaiting() {
        LoopTestHarness.run { harness in
            let source = harness.addSource("s") { harness.log("performed") }
            harness.signal(source)
            #expect(harness.runTurn() == .stopped)
            // Pass 1 handles the source0 and polls (L-a); pass 2 waits, and the turn ends there.
            harness.expectSteps("entry · beforeTimers · beforeSources · source(s) · log(performed)"
                + " · beforeTimers · beforeSources · beforeWaiting · afterWaiting · exit")
            #expect(harness.steps().map(\.pass) == [1, 1, 1, 1, 1, 2, 2, 2, 2, 2])
            #expect(harness.clock.now == .zero)
        }
    }

    @Test func runUntilIdleRunsTurnsWhileWorkIsDue() {
        LoopTestHarness.run { harness in
            var remaining = 3
            var source: LoopSource?
            // Re-signalled from a BeforeWaiting observer: each turn leaves work for the next one.
            source = harness.addSource("s") { remaining -= 1 }
            harness.addObserver("again", activities: .beforeWaiting) { _ in
                if remaining > 0, let source { harness.signal(source) }
            }
            harness.signal(source!)
            #expect(harness.runUntilIdle() == 3)
            #expect(remaining == 0)
            #expect(harness.runUntilIdle() == 0)   // nothing due: no turn at all
            #expect(harness.clock.now == .zero)
        }
    }

    @Test func runUntilIdleReportsWorkThatNeverSettles() {
        let collected = CollectingLoopTestReporter()
        LoopTestHarness.run(reporter: collected) { harness in
            var source: LoopSource?
            source = harness.addSource("s") {}
            harness.addObserver("again", activities: .beforeWaiting) { _ in source.map(harness.signal) }
            harness.signal(source!)
            #expect(harness.runUntilIdle(maxTurns: 3) == 3)
            source?.invalidate()
        }
        #expect(collected.messages.count == 1)
        #expect(collected.messages.first?.hasPrefix(
            "runUntilIdle() did not settle after 3 turns of kCFRunLoopDefaultMode; still due: source0 's' is signalled. "
                + "The last turn ran: entry · beforeTimers · beforeSources · source(s) · beforeTimers · beforeSources"
                + " · beforeWaiting · observer(again) · afterWaiting · exit") == true)
    }

    @Test func advanceFiresTimersAtTheirDeadlinesAndEndsAtTheDeadline() throws {
        try LoopTestHarness.run { harness in
            try harness.addTimer("t1", after: .milliseconds(30)) { _ in harness.log("t1") }
            try harness.addTimer("tick", after: .milliseconds(20), interval: .milliseconds(20)) { _ in harness.log("tick") }
            #expect(harness.advance(by: .milliseconds(50)) == .timedOut)
            #expect(harness.clock.now == LoopInstant(nanoseconds: 50_000_000))
            harness.expectSteps("timer(tick) · log(tick) · timer(t1) · log(t1) · timer(tick) · log(tick)", selection: calloutsAndLogs)
            let times = harness.steps(LoopStepSelection(kinds: [.logs])).map(\.time.nanoseconds)
            #expect(times == [20_000_000, 30_000_000, 40_000_000])
        }
    }

    @Test func advanceOnAModeWithNothingToRunStillMovesTheClock() {
        LoopTestHarness.run { harness in
            #expect(harness.advance(by: .seconds(2), mode: "Empty") == .finished)   // R3: no Entry
            #expect(harness.clock.now == LoopInstant(nanoseconds: 2_000_000_000))
            #expect(harness.steps().isEmpty)
        }
    }

    @Test func aNegativeDurationIsReportedAndNothingRuns() {
        let collected = CollectingLoopTestReporter()
        LoopTestHarness.run(reporter: collected) { harness in
            harness.advance(by: .milliseconds(-1))
            #expect(harness.recorder.entries.isEmpty)
            #expect(harness.failures.map(\.message) == ["advance(by: -0.001 seconds): a clock cannot go back; nothing ran"])
        }
        #expect(collected.messages == ["advance(by: -0.001 seconds): a clock cannot go back; nothing ran"])
    }

    @Test func aPortMessageIsHandledAfterTheWait() throws {
        try LoopTestHarness.run { harness in
            let port = try harness.addPort("p") { message in
                if case .bytes(let bytes) = message { harness.log("got \(bytes)") }
            }
            harness.send([7], to: port)
            #expect(harness.runUntilIdle() == 1)
            // Pass 1 waits: the port's descriptor ends the wait before the harness's wake-up (S8).
            harness.expectSteps("entry · beforeTimers · beforeSources · beforeWaiting · afterWaiting · port(p)"
                + " · log(got [7]) · exit")
            #expect(harness.steps().first { $0.step == .port("p") }?.rule.id == "S8")
        }
    }

    @Test func aReadyPipeIsHandledOnceAndClosedAtTeardown() throws {
        var ends: [OpenFile] = []
        try LoopTestHarness.run { harness in
            let pipe = try harness.addFileSource("socket") { events in harness.log("ready \(events)") }
            ends = [try #require(OpenFile(pipe.readEnd)), try #require(OpenFile(pipe.writeEnd))]
            harness.makeReady(pipe)
            #expect(harness.runUntilIdle() == 1)
            #expect(harness.runUntilIdle() == 0)   // the harness drained the pipe in the callout
            harness.expectSteps("fd(socket) · log(ready [readable])", selection: calloutsAndLogs)
        }
        #expect(ends.count == 2 && ends.allSatisfy { !$0.isStillOpen })
    }

    @Test func aSourceThatSignalsItselfIsStoppedByThePassGuard() {
        let collected = CollectingLoopTestReporter()
        LoopTestHarness.run(maxPassesPerRun: 5, reporter: collected) { harness in
            var busy: LoopSource?
            busy = harness.addSource("busy") { busy?.signal() }
            harness.signal(busy!)
            #expect(harness.runTurn() == .stopped)
            busy?.invalidate()
        }
        #expect(collected.messages == [
            "runTurn(): the run of kCFRunLoopDefaultMode made 5 passes without waiting and was stopped. Its last pass "
                + "ran: source(busy) (S2: signalled sources0 run after BeforeSources and the first blocks, by order). "
                + "A pass that handles a source0 does not wait (L-a), and a source0 that signals itself runs again in "
                + "the next pass (S3).",
        ])
    }

    @Test func aRefusedSendIsReported() throws {
        let collected = CollectingLoopTestReporter()
        try LoopTestHarness.run(reporter: collected) { harness in
            let port = try harness.addPort("p") { _ in }
            port.invalidate()
            harness.send([1], to: port)
        }
        #expect(collected.messages == ["send to port 'p' was refused: the port was invalidated"])
    }

    @Test func aTurnOfAModeThatIsNotCommonRecordsItsActivitiesToo() {
        LoopTestHarness.run { harness in
            let source = harness.addSource("drag", mode: .tracking) { harness.log("dragged") }
            harness.signal(source)
            #expect(harness.runUntilIdle(mode: .tracking) == 1)
            // The standard observers are in the common modes only: no commit hooks here.
            harness.expectSteps("entry · beforeTimers · beforeSources · source(drag) · log(dragged)"
                + " · beforeTimers · beforeSources · beforeWaiting · afterWaiting · exit")
        }
    }

    @Test func blocksAndQueuedWorkRunWhereTheRulesPutThem() {
        LoopTestHarness.run { harness in
            let source = harness.addSource("s") {
                harness.submit("queued") { harness.log("from the queue") }
                harness.perform("later") { harness.log("from the block") }
            }
            harness.signal(source)
            harness.runUntilIdle()
            // B3: the block runs right after the sources0 of the pass; the queue's work follows
            // by the fast path, before BeforeWaiting (L-a).
            harness.expectSteps("source(s) · block(later) · log(from the block) · mainQueue(queued) · log(from the queue)",
                                selection: calloutsAndLogs)
            #expect(harness.steps(calloutsAndLogs).map { $0.rule.id } == ["S2", "B3", "B3", "L-a", "L-a"])
        }
    }
}

/// An open descriptor and the file it names. Other suites run in the same process and may get
/// the same number once it is closed, so "still open" compares the file, not just the number.
struct OpenFile {
    let fd: Int32
    let device: UInt
    let inode: UInt

    /// nil when `fd` is not open.
    init?(_ fd: Int32) {
        var status = stat()
        guard fd >= 0, fstat(fd, &status) == 0 else { return nil }
        self.fd = fd
        device = UInt(status.st_dev)
        inode = UInt(status.st_ino)
    }

    /// Whether `fd` still names this file.
    var isStillOpen: Bool {
        guard let now = OpenFile(fd) else { return false }
        return now.device == device && now.inode == inode
    }
}
