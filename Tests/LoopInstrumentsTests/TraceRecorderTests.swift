import Foundation
import Testing
import RunLoopCore
@testable import LoopInstruments

@Suite struct TraceRecorderTests {
    @Test func recordsLoopEventsWithPassModeLabelAndTime() {
        let recorder = TraceRecorder(clock: ManualClock(at(ns: 7)))
        var script = EventScript(recorder: recorder)
        script.pass = 3
        script.time = at(ns: 1_500)
        script.mode = .tracking
        script.activity(.beforeSources)
        script.callout(.source0, "reload")
        let entries = recorder.entries
        #expect(entries.map(\.kind) == [.activity(.beforeSources), .calloutBegin(.source0), .calloutEnd(.source0)])
        #expect(entries.allSatisfy { $0.pass == 3 && $0.mode == .tracking && $0.time == at(ns: 1_500) })
        #expect(entries[1].label == "reload")
        #expect(entries.map(\.sequence) == [0, 1, 2])
    }

    @Test func logsMarksPoolAndCommitsTakeTheLastPassAndModeAndTheRecorderClock() {
        let clock = ManualClock(at(ns: 42))
        let recorder = TraceRecorder(clock: clock)
        var script = EventScript(recorder: recorder, clock: clock)
        script.pass = 9
        script.mode = "custom"
        script.activity(.beforeWaiting)
        recorder.log("reloadData")
        clock.advance(milliseconds: 1)
        recorder.mark("table.setNeedsLayout")
        recorder.record(PoolRecord(operation: .popAndPush, entriesBefore: 120, entriesAfter: 1, pages: 1))
        recorder.record(CommitRecord(frame: 4, reason: "BeforeWaiting",
                                     phases: [.init(name: "layout", layers: ["table"]), .init(name: "display", layers: ["cell"])]))
        let entries = recorder.entries
        #expect(entries.count == 5)
        #expect(entries[1].kind == .log && entries[1].label == "reloadData" && entries[1].time == at(ns: 42))
        #expect(entries[2].kind == .mark && entries[2].time == at(ns: 1_000_042))
        #expect(entries.dropFirst().allSatisfy { $0.pass == 9 && $0.mode == "custom" })
        guard case .pool(let pool) = entries[3].kind else { Issue.record("not a pool entry"); return }
        #expect(pool.released == 119)
        guard case .commit(let commit) = entries[4].kind else { Issue.record("not a commit entry"); return }
        #expect(commit.layers == ["table", "cell"])
    }

    @Test func boundedRecorderKeepsTheNewestEntries() {
        let recorder = TraceRecorder(clock: ManualClock(), capacity: 3)
        for index in 0..<5 { recorder.log("line \(index)") }
        #expect(recorder.count == 3)
        #expect(recorder.droppedCount == 2)
        #expect(recorder.entries.map(\.label) == ["line 2", "line 3", "line 4"])
        #expect(recorder.entries.map(\.sequence) == [2, 3, 4])
        recorder.clear()
        #expect(recorder.entries.isEmpty)
        recorder.log("after clear")
        #expect(recorder.entries.map(\.sequence) == [5])
    }

    @Test func concurrentWritersLoseNothingAndGetOwnThreadNumbers() {
        let recorder = TraceRecorder(clock: ManualClock())
        let threads = 4, perThread = 2_000
        DispatchQueue.concurrentPerform(iterations: threads) { worker in
            for index in 0..<perThread { recorder.log("w\(worker) \(index)") }
        }
        let entries = recorder.entries
        #expect(entries.count == threads * perThread)
        #expect(Set(entries.map(\.sequence)).count == threads * perThread)
        // Each worker's lines keep their order and all carry one thread number.
        for worker in 0..<threads {
            let mine = entries.filter { $0.label.hasPrefix("w\(worker) ") }
            #expect(mine.map(\.label) == (0..<perThread).map { "w\(worker) \($0)" })
            #expect(Set(mine.map(\.thread)).count == 1)
        }
    }

    @Test func splitsTurnsAtSleep() {
        let recorder = TraceRecorder(clock: ManualClock())
        var script = EventScript(recorder: recorder)
        script.runBegin()
        script.activity(.entry)
        script.activity(.beforeTimers)
        script.activity(.beforeSources)
        script.activity(.beforeWaiting)
        script.recordSleep()
        script.time = at(ms: 5)
        script.pass = 2
        script.wake()
        script.activity(.afterWaiting)
        script.callout(.timer, "tick")
        script.activity(.exit)
        script.runEnd(.finished)
        let turns = TraceTurn.split(recorder.entries)
        #expect(turns.count == 2)
        #expect(turns[0].entries.last?.kind == .sleep)
        #expect(turns[1].entries.first?.kind == .wake)
        #expect(turns[1].passes == 2...2)
        #expect(turns[0].duration == .zero)
    }
}
