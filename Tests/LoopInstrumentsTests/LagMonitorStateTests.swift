import Foundation
import Testing
import RunLoopCore
@testable import LoopInstruments

/// A lag monitor driven by hand, observer call by observer call, on a manual clock.
@Suite struct LagMonitorStateTests {
    let clock = ManualClock()
    let loop: Loop

    init() { loop = Loop(clock: clock) }

    @Test func slowCalloutIsReportedOnceWithItsLabelAndSpan() throws {
        let monitor = try LagMonitor(clock: clock, threshold: .milliseconds(100))
        monitor.beginObserved(.entry)
        monitor.beginObserved(.beforeTimers)            // turn starts at 0
        monitor.beginObserved(.beforeSources)
        monitor.willCallOut(.source0, label: "reloadData", loop: loop)
        clock.advance(milliseconds: 200)
        let report = monitor.check()
        #expect(report?.calloutLabel == "reloadData")
        #expect(report?.calloutKind == .source0)
        #expect(report?.span == .milliseconds(200))
        #expect(report?.startedBy == .beforeTimers)
        clock.advance(milliseconds: 200)
        #expect(monitor.check() == nil)                 // once per turn
        monitor.didCallOut(.source0, label: "reloadData", loop: loop)
        monitor.endObserved(.beforeWaiting)
        #expect(monitor.reports.count == 1)
        #expect(monitor.completedTurns == 1)
        #expect(monitor.longestTurn == .milliseconds(400))
    }

    @Test func shortTurnsAreNotReported() throws {
        let monitor = try LagMonitor(clock: clock, threshold: .milliseconds(100))
        for _ in 0..<20 {
            monitor.beginObserved(.afterWaiting)
            monitor.willCallOut(.timer, label: "tick", loop: loop)
            clock.advance(milliseconds: 10)
            #expect(monitor.check() == nil)
            monitor.didCallOut(.timer, label: "tick", loop: loop)
            monitor.endObserved(.beforeWaiting)
            clock.advance(milliseconds: 500)             // asleep: never counted
            #expect(monitor.check() == nil)
        }
        #expect(monitor.reports.isEmpty)
        #expect(monitor.completedTurns == 20)
    }

    @Test func theSpanRunsFromWakeUpNotFromTheFirstActivityAfterIt() throws {
        let monitor = try LagMonitor(clock: clock, threshold: .milliseconds(100))
        monitor.beginObserved(.afterWaiting)             // t = 0
        clock.advance(milliseconds: 60)
        monitor.beginObserved(.beforeTimers)             // same turn: must not restart
        clock.advance(milliseconds: 60)
        #expect(monitor.check()?.span == .milliseconds(120))
    }

    @Test func theCommitIsInsideTheSpan() throws {
        // The end observer runs after the commit at 2000000: work done in the commit counts.
        let monitor = try LagMonitor(clock: clock, threshold: .milliseconds(100))
        monitor.beginObserved(.afterWaiting)
        monitor.beginObserved(.beforeWaiting)           // begin observer sees BW too; no effect
        monitor.willCallOut(.observer, label: "CA::Transaction::commit", loop: loop)
        clock.advance(milliseconds: 150)
        #expect(monitor.check()?.calloutLabel == "CA::Transaction::commit")
    }

    @Test func reportsTheInnermostCalloutAndTheStack() throws {
        let monitor = try LagMonitor(clock: clock, threshold: .milliseconds(50))
        monitor.beginObserved(.afterWaiting)
        monitor.willCallOut(.source1, label: "event", loop: loop)
        monitor.beginObserved(.entry)                    // nested run inside the callout
        monitor.beginObserved(.beforeTimers)
        monitor.willCallOut(.timer, label: "nestedTimer", loop: loop)
        clock.advance(milliseconds: 80)
        let report = monitor.check()
        #expect(report?.calloutLabel == "nestedTimer")
        #expect(report?.calloutStack == ["event", "nestedTimer"])
    }

    @Test func leavingANestedRunMeasuresTheRestOfTheOuterCallout() throws {
        let monitor = try LagMonitor(clock: clock, threshold: .milliseconds(50))
        monitor.beginObserved(.entry)
        monitor.beginObserved(.afterWaiting)
        monitor.willCallOut(.source0, label: "outer", loop: loop)
        monitor.beginObserved(.entry)                    // nested run
        monitor.beginObserved(.beforeTimers)
        monitor.endObserved(.beforeWaiting)              // nested turn ends
        monitor.endObserved(.exit)                       // back in "outer"
        #expect(monitor.isAwake)
        clock.advance(milliseconds: 60)
        let report = monitor.check()
        #expect(report?.startedBy == .exit)
        #expect(report?.calloutLabel == "outer")
        monitor.didCallOut(.source0, label: "outer", loop: loop)
        monitor.endObserved(.exit)                       // outermost run ends
        #expect(!monitor.isAwake)
    }

    @Test func checkAtCalloutEndNamesTheCalloutThatJustRan() throws {
        let reports = ReportBox()
        let monitor = try LagMonitor(clock: clock, threshold: .milliseconds(100)) { reports.append($0) }
        monitor.checksAtCalloutEnd = true
        monitor.beginObserved(.afterWaiting)
        monitor.willCallOut(.block, label: "fast", loop: loop)
        clock.advance(milliseconds: 10)
        monitor.didCallOut(.block, label: "fast", loop: loop)
        monitor.willCallOut(.block, label: "slow", loop: loop)
        clock.advance(milliseconds: 200)
        monitor.didCallOut(.block, label: "slow", loop: loop)
        #expect(reports.labels == ["slow"])
    }

    @Test func reportsGoToTheRecorder() throws {
        let recorder = TraceRecorder(clock: clock)
        let monitor = try LagMonitor(clock: clock, threshold: .milliseconds(100), recorder: recorder)
        monitor.beginObserved(.afterWaiting)
        clock.advance(milliseconds: 101)
        monitor.check()
        #expect(recorder.lines(TextLogFilter(activities: [], includesLogs: false, includesLags: true))
                == ["lag 101.000ms in (no callout)"])
    }

    @Test func explicitNowIsHonoured() throws {
        let monitor = try LagMonitor(clock: clock, threshold: .seconds(1))
        monitor.beginObserved(.afterWaiting)
        #expect(monitor.check(now: LoopInstant(nanoseconds: 999_000_000)) == nil)
        #expect(monitor.check(now: LoopInstant(nanoseconds: 1_000_000_001))?.span == .nanoseconds(1_000_000_001))
    }

    @Test func thresholdAndCheckPeriodAreDurationsAndRefuseBadValues() throws {
        #expect(throws: LoopError.negativeDuration(.milliseconds(-1), what: "LagMonitor threshold")) {
            _ = try LagMonitor(clock: clock, threshold: .milliseconds(-1))
        }
        #expect(throws: LoopError.self) { _ = try LagMonitor(clock: clock, checkPeriod: .zero) }
        let monitor = try LagMonitor(clock: clock)
        #expect(monitor.threshold == .seconds(2) && monitor.checkPeriod == .seconds(1))   // Matrix's values
        try monitor.setThreshold(.milliseconds(30))
        try monitor.setCheckPeriod(.milliseconds(5))
        #expect(throws: LoopError.self) { try monitor.setThreshold(.seconds(-1)) }
        #expect(throws: LoopError.self) { try monitor.setCheckPeriod(.seconds(-1)) }
        #expect(throws: LoopError.self) { try monitor.setCheckPeriod(.zero) }
        #expect(monitor.threshold == .milliseconds(30) && monitor.checkPeriod == .milliseconds(5))
        // The new threshold is the one applied, and reported.
        monitor.beginObserved(.afterWaiting)
        clock.advance(milliseconds: 31)
        let report = monitor.check()
        #expect(report?.span == .milliseconds(31))
        #expect(report?.threshold == .milliseconds(30))
    }
}

final class ReportBox: @unchecked Sendable {
    // Sendable: guarded by `lock`.
    private let lock = NSLock()
    private var reports: [LagReport] = []
    func append(_ report: LagReport) { lock.withLock { reports.append(report) } }
    var labels: [String] { lock.withLock { reports.map { $0.calloutLabel ?? "-" } } }
    var count: Int { lock.withLock { reports.count } }
}

@Suite struct WatchdogTests {
    @Test func watchdogThreadStartsStopsAndIsJoined() throws {
        let monitor = try LagMonitor(clock: ManualClock(), threshold: .seconds(1), checkPeriod: .milliseconds(10))
        #expect(!monitor.isWatchdogRunning)
        monitor.startWatchdog()
        #expect(monitor.isWatchdogRunning)
        let tid = monitor.watchdogThreadID
        #expect(tid > 0)
        #expect(FileManager.default.fileExists(atPath: "/proc/self/task/\(tid)"))
        monitor.stopWatchdog()
        #expect(!monitor.isWatchdogRunning)
        #expect(monitor.watchdogThreadID == 0)
        // Joined: the kernel thread is gone, not merely asked to stop.
        #expect(threadIsGone(tid))
        monitor.stopWatchdog()                           // idempotent
    }

    @Test func restartingGivesAFreshThreadAndStopIsPrompt() throws {
        // A long period must not delay stop: the thread waits on a condition with a deadline, which stop signals.
        let monitor = try LagMonitor(clock: ManualClock(), threshold: .seconds(1), checkPeriod: .seconds(3_600))
        for _ in 0..<3 {
            monitor.startWatchdog()
            let tid = monitor.watchdogThreadID
            monitor.stopWatchdog()
            #expect(threadIsGone(tid))
        }
    }

    @Test func droppingTheMonitorStopsItsWatchdog() throws {
        var tid: Int64 = 0
        do {
            let monitor = try LagMonitor(clock: ManualClock(), checkPeriod: .seconds(3_600))
            monitor.startWatchdog()
            tid = monitor.watchdogThreadID
        }
        #expect(tid > 0)
        #expect(threadIsGone(tid))
    }

    @Test func watchdogReportsALongTurnFromItsOwnThread() throws {
        let clock = ManualClock()
        let reported = DispatchSemaphore(value: 0)
        let box = ReportBox()
        let monitor = try LagMonitor(clock: clock, threshold: .milliseconds(100), checkPeriod: .milliseconds(1)) { report in
            box.append(report)
            reported.signal()
        }
        monitor.beginObserved(.afterWaiting)
        monitor.willCallOut(.source0, label: "stuck", loop: Loop(clock: clock))
        clock.advance(milliseconds: 250)
        monitor.startWatchdog()
        // Waits for the event, not for time: returns as soon as the watchdog reports.
        let result = reported.wait(timeout: .now() + 30)
        monitor.stopWatchdog()
        #expect(result == .success)
        #expect(box.labels == ["stuck"])
    }
}
