import Testing
import RunLoopDiagnostics
@testable import RunLoopCore

/// Item 5 of issue 14: `performOnOwnerThread` / `submitOnOwnerThread` take closures that are
/// not `Sendable`, checked to be made on the loop's thread.
@Suite("OwnerThreadClosures")
struct OwnerThreadClosureTests {
    /// Not `Sendable`: a plain class with mutable state.
    final class Log {
        var lines: [String] = []
    }

    @Test("performOnOwnerThread runs a non-Sendable closure at the loop's block step, in FIFO order with perform")
    func performNonSendable() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let log = Log()
        loop.perform { trace.add("sendable block") }
        #expect(loop.performOnOwnerThread { log.lines.append("ran"); trace.add("owner block") })
        loop.run(mode: .default, timeout: 0)
        #expect(log.lines == ["ran"])
        #expect(trace.all == ["E", "BT", "BS", "sendable block", "owner block", "X"])
    }

    @Test("submitOnOwnerThread runs a non-Sendable closure in the loop's async-queue drain")
    func submitNonSendable() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let log = Log()
        #expect(loop.submitOnOwnerThread { log.lines.append("drained") })
        #expect(loop.run(mode: .default, timeout: .seconds(1), returnAfterSourceHandled: true) == .handledSource)
        #expect(log.lines == ["drained"])
    }

    @Test("after teardown both refuse, and the closure never runs")
    func refusedAfterTeardown() {
        let (loop, _) = virtualLoop()
        loop.tearDown()
        let log = Log()
        let recorder = DiagnosticsRecorder(capturing: [.workAfterTeardown])
        #expect(!loop.performOnOwnerThread(label: "owner-block-after-teardown") { log.lines.append("block") })
        #expect(!loop.submitOnOwnerThread(label: "owner-work-after-teardown") { log.lines.append("work") })
        #expect(log.lines.isEmpty)
        for label in ["owner-block-after-teardown", "owner-work-after-teardown"] {
            #expect(recorder.diagnostics(withID: .workAfterTeardown, item: label).count == 1, "\(label)")
        }
    }
}
