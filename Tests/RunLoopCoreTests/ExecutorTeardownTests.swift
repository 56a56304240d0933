import Testing
import PThreads
import RunLoopDiagnostics
@testable import RunLoopCore

/// Counts runs per task id; touched only on the loop's thread (checked at each record).
final class JobTally: @unchecked Sendable {  // `runs` and `total` change only on `loop`'s thread, checked
    let loop: Loop
    private var runs: [UInt8]
    private var total = 0
    private let expected: Int
    let allRan = Flag()

    init(loop: Loop, count: Int) {
        self.loop = loop
        self.runs = [UInt8](repeating: 0, count: count)
        self.expected = count
    }

    func record(_ id: Int) {
        precondition(loop.isOwnerThread, "a job of the loop ran off its thread")
        runs[id] &+= 1
        total += 1
        if total == expected { allRan.set() }
    }

    /// Read after the loop's thread is done with the tally (joined, or torn down here).
    var ranOnceEach: Bool { runs.allSatisfy { $0 == 1 } }
    var ranTotal: Int { total }
}

/// An actor on a given loop that checks its isolation on every call.
private actor CheckedCounter {
    let loop: Loop
    private(set) var count = 0
    init(loop: Loop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    func bump() {
        loop.checkIsolated()
        count += 1
    }
}

/// W6 for jobs: a loop torn down with jobs pending runs each (on its thread) or reports each.
@Suite("Executor teardown")
struct ExecutorTeardownTests {
    @Test("W6: tearDown on the loop's thread runs every pending job, and the jobs those enqueue")
    func teardownRunsPendingJobs() {
        let (loop, _) = virtualLoop()
        let tally = JobTally(loop: loop, count: 100)
        let counter = CheckedCounter(loop: loop)
        for id in 0..<100 {
            // Each task hops to the actor (a second job) and back (a third): teardown's rounds.
            Task(executorPreference: loop) {
                await counter.bump()
                tally.record(id)
            }
        }
        loop.tearDown()   // never ran: every job runs here
        #expect(tally.ranTotal == 100)
        #expect(tally.ranOnceEach)   // so none was reported as `loop.job-not-run` (the recorder
                                     // is process-wide: other suites' teardowns report theirs)
        let recorder = DiagnosticsRecorder(capturing: [.workAfterTeardown])
        #expect(!loop.submit(label: "after-teardown-work") {}, "the loop is torn down afterwards")
        #expect(recorder.diagnostics(withID: .workAfterTeardown, item: "after-teardown-work").count == 1)
    }

    @Test("W6: a LoopThread stopped with jobs pending runs them as its thread exits")
    func loopThreadExitRunsPendingJobs() {
        let worker = LoopThread(name: "exec-teardown")
        worker.loop.jobModes = ["parked"]     // a mode the thread never runs: jobs wait for teardown
        let tally = JobTally(loop: worker.loop, count: 50)
        for id in 0..<50 {
            Task(executorPreference: worker.loop) { tally.record(id) }
        }
        worker.stop()     // joins: the thread-exit teardown ran the jobs
        #expect(tally.ranTotal == 50)
        #expect(tally.ranOnceEach)
    }

    @Test("W6: torn down off its thread, a loop reports each pending job as loop.job-not-run")
    func teardownOffThreadReports() {
        let made = Locked<Loop?>(nil)
        BackgroundThread { made.withLock { $0 = Loop(clock: VirtualClock()) } }.join()
        let loop = made.withLock { $0 }!
        let recorder = DiagnosticsRecorder(capturing: [.jobNotRun])
        defer { _ = recorder.stop() }
        let ran = Trace()
        for id in 0..<3 {
            Task(executorPreference: loop) { ran.add("\(id)") }
        }
        loop.tearDown()   // not its thread: nothing may run the jobs here
        #expect(ran.all.isEmpty)
        #expect(recorder.diagnostics(withID: .jobNotRun).count == 3)
    }
}
