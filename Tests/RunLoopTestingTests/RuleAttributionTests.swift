import RunLoopTesting
import Testing

/// Which rule of Docs/Rules.md each step of a hand-written trace is attributed to.
@Suite struct RuleAttributionTests {
    @Test func everyStepOfARunNamesItsPassAndRule() {
        let placements = LoopStepPlacement.placements(in: TraceFixture.timerSourceCommit)
        #expect(placements.map(\.step.description) == [
            "entry", "beforeTimers", "beforeSources", "beforeWaiting", "afterWaiting", "timer(t1)",
            "beforeTimers", "beforeSources", "source(s)", "log(x)",
            "beforeTimers", "beforeSources", "beforeWaiting", "log(cellForRow)", "layout(root)", "display(root)", "commit",
            "afterWaiting", "exit",
        ])
        #expect(placements.map(\.pass) == [1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3])
        #expect(placements.map { $0.rule.id ?? "-" } == [
            "R5", "L3", "L3", "L-a", "L-a", "L-b",
            "L3", "L3", "S2", "S2",
            "L-a", "L3", "L-a", "TX6", "TX3", "TX2", "TX6",
            "L-a", "L-e",
        ])
        #expect(placements[6].rule.reason == "pass 1 waited and ended; pass 2 begins with BeforeTimers")
        #expect(placements[10].rule.reason == "pass 2 did not wait (it handled a source0 or queued work, or the run polls), so pass 3 began at once")
        #expect(placements[13].rule.reason == "written inside observer(CA::Transaction::observer_callback), which ran there: "
                + "the commit observer runs at beforeWaiting, order 2000000")
        #expect(placements[18].rule.reason == "an exit check ended the run: its deadline had passed")
    }

    @Test func aWindowKeepsTheAttributionOfTheWholeTrace() {
        let window = LoopStepSelection(kinds: [.activities], from: .activity(.beforeTimers, occurrence: 3), to: .wake())
        let placements = LoopStepPlacement.placements(in: TraceFixture.timerSourceCommit, selection: window)
        #expect(placements.map(\.description) == [
            "beforeTimers in pass 3 — L-a: pass 2 did not wait (it handled a source0 or queued work, or the run polls), so pass 3 began at once",
            "beforeSources in pass 3 — L3: every pass notifies BeforeSources right after BeforeTimers",
            "beforeWaiting in pass 3 — L-a: the pass handled no source0 and has time left, so it is about to wait",
        ])
    }

    @Test func timersAfterTheFirstInAPassAndLayoutsRepeatedInACommit() {
        let trace = TraceFixture.build([
            (.runBegin, "", 0), (.activity(.entry), "", 0),
            (.activity(.afterWaiting), "", 1),
            (.calloutBegin(.timer), "a", 1), (.calloutEnd(.timer), "a", 1),
            (.calloutBegin(.timer), "b", 1), (.calloutEnd(.timer), "b", 1),
            (.calloutBegin(.mainQueue), "q", 1), (.calloutEnd(.mainQueue), "q", 1),
            (.commit(CommitRecord(frame: 4, reason: "tooLate", phases: [.init(name: "layout", layers: ["Q", "P", "Q"])])), "commit", 2),
            (.commit(CommitRecord(frame: 5, reason: "explicitCommit")), "commit", 2),
            (.commit(CommitRecord(frame: 6, reason: "flush")), "commit", 2),
            (.commit(CommitRecord(frame: 7, reason: "exit")), "commit", 2),
            (.log, "by the test", 2),
            (.calloutBegin(.mainQueue), "fast", 2), (.calloutEnd(.mainQueue), "fast", 2),
        ])
        let rules = LoopStepPlacement.placements(in: trace, selection: LoopStepSelection(kinds: [.callouts, .commits, .logs]))
            .map { "\($0.step) \($0.rule.id ?? "-")" }
        #expect(rules == [
            "timer(a) L-b", "timer(b) T4", "mainQueue(q) X4",
            "layout(Q) TX3", "layout(P) TX3", "layout(Q) TX4", "commit TX13",
            "commit TX8", "commit TX10", "commit TX6", "log(by the test) -", "mainQueue(fast) L-a",
        ])
    }
}
