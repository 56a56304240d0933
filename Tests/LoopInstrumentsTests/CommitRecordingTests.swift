import RunLoopCore
import Testing
import Transactions
import Autorelease
@testable import LoopInstruments

@Suite struct CommitRecordingTests {
    @Test func commitSinkRecordsPhasesAndLayersAndForwards() throws {
        let pipeline = CommitPipeline()
        let recorder = TraceRecorder(clock: ManualClock())
        let frames = FrameLog()
        pipeline.sink = TraceCommitSink(recorder: recorder, forwardingTo: frames)
        pipeline.asCurrent {
            let root = Layer(name: "table")
            let cell = Layer(name: "cell")
            root.addSublayer(cell)
            root.setNeedsLayout()
            cell.setNeedsDisplay()
            pipeline.flush()
        }
        #expect(frames.frames.count == 1)
        let entry = try #require(recorder.entries.first)
        guard case .commit(let commit) = entry.kind else { Issue.record("not a commit: \(entry.kind)"); return }
        #expect(commit.frame == 1)
        #expect(commit.reason == "flush")
        #expect(commit.phases.map(\.name) == ["layout", "display"])
        #expect(commit.phases[0].layers.contains("table"))
        #expect(commit.phases[1].layers == ["cell"])
        #expect(recorder.lines(.everything).first?.hasPrefix("commit #1 [flush] layout(") == true)
    }

    @Test func poolRecordFromStatistics() {
        final class Node {}
        let before = AutoreleasePool.statistics
        let token = AutoreleasePool.push()
        for _ in 0..<10 { AutoreleasePool.autorelease(Node()) }
        let full = AutoreleasePool.statistics
        AutoreleasePool.pop(token)
        let record = PoolRecord(operation: .pop, before: full, after: AutoreleasePool.statistics)
        #expect(record.released == 11)
        #expect(record.entriesAfter == before.pendingEntries)
    }
}
