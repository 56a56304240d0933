import Testing
@testable import RunLoopCore

/// Jobs against blocks, sources and observers within one pass (B3), on a virtual clock, one
/// thread: `Task(executorPreference:)` enqueues its first job on the loop at once, so the test
/// can queue jobs, blocks and signals before the pass and read the order after it.
@Suite("Executor ordering")
struct ExecutorOrderingTests {
    @Test("B3: a job runs at the block step in FIFO order with blocks, after BS, before sources0")
    func jobsAmongBlocks() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let source = recordingSource("source0", trace)
        loop.add(source, mode: .default)
        source.signal()
        loop.perform { trace.add("block1") }
        Task(executorPreference: loop) { trace.add("job") }
        loop.perform { trace.add("block2") }
        loop.run(mode: .default, timeout: 0)
        // Polling pass: no BW/AW (L-a); blocks after BS (B3), then the signalled source (S2).
        #expect(trace.all == ["E", "BT", "BS", "block1", "job", "block2", "source0", "X"])
    }

    @Test("B3: a job that enqueues a job — the second runs at the next block step, not in the same walk")
    func jobEnqueuesJob() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let source = recordingSource("source0", trace)
        loop.add(source, mode: .default)
        source.signal()
        Task(executorPreference: loop) {
            trace.add("job part 1")
            await Task.yield()          // re-enqueues the task on its executor, the loop
            trace.add("job part 2")
        }
        loop.perform { trace.add("block") }
        loop.run(mode: .default, timeout: 0)
        // The yield's job is queued during the walk after BS, so it waits for the walk after
        // the handled source0 (B3: "again after sources0 if one was handled").
        #expect(trace.all == ["E", "BT", "BS", "job part 1", "block", "source0", "job part 2", "X"])
    }

    @Test("jobs run only in jobModes: a job for the default mode waits while another mode runs")
    func jobModesGate() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let other: Loop.Mode = "other"
        recordActivities(loop, trace, mode: other, prefix: "other:")
        loop.add(LoopSource(label: "keeps other non-empty") {}, mode: other)
        loop.jobModes = [.default]
        Task(executorPreference: loop) { trace.add("job") }
        loop.run(mode: other, timeout: 0)
        #expect(trace.all == ["other:E", "other:BT", "other:BS", "other:X"])
        trace.reset()
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["E", "BT", "BS", "job", "X"])
    }

    @Test("a task that prefers the loop runs its nonisolated code as one job callout, on the loop's thread")
    func taskExecutorJobIsOneCallout() {
        final class Jobs: LoopEventSink, @unchecked Sendable {  // written and read on the test's thread only
            var count = 0
            func loop(_ loop: Loop, emitted event: LoopEvent) {
                if case .calloutBegin(.job) = event.kind { count += 1 }
            }
        }
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let jobs = Jobs()
        loop.eventSink = jobs
        let onLoopThread = Trace()
        Task(executorPreference: loop) { onLoopThread.add("\(loop.isOwnerThread)") }
        loop.run(mode: .default, timeout: 0)
        #expect(onLoopThread.all == ["true"])
        #expect(jobs.count == 1, "a nonisolated task body on its preferred loop took \(jobs.count) jobs")
    }
}
