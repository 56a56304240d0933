import RunLoopTesting
import Testing

/// The failure text of the ordering assertions, written out by hand: the alignment, and for each
/// step out of place, missing or unexpected, its pass and the rule (Docs/Rules.md) that put it there.
@Suite struct OrderingDiffTests {
    @Test func aSourceExpectedAfterTheWaitIsShownWhereItRanAndWhy() {
        let collected = CollectingLoopTestReporter()
        LoopTestHarness.run(reporter: collected) { harness in
            harness.signal(harness.addSource("s") {})
            harness.runTurn()
            harness.expectSteps("entry · beforeTimers · beforeSources · beforeWaiting · afterWaiting · source(s) · exit",
                                selection: LoopStepSelection(kinds: [.activities, .callouts]))
        }
        #expect(collected.messages == ["""
            Loop steps differ from the expected order (7 expected, 9 happened): 1 out of place, 0 missing, 2 unexpected.
                #1 pass 1  entry
                #2 pass 1  beforeTimers
                #3 pass 1  beforeSources
              + #4 pass 1  source(s) — S2: signalled sources0 run after BeforeSources and the first blocks, by order; expected later
              + #5 pass 2  beforeTimers — L-a: pass 1 did not wait (it handled a source0 or queued work, or the run polls), so pass 2 began at once; not expected
              + #6 pass 2  beforeSources — L3: every pass notifies BeforeSources right after BeforeTimers; not expected
                #7 pass 2  beforeWaiting
                #8 pass 2  afterWaiting
              - source(s) — expected here; it happened at #4 in pass 1 (S2)
                #9 pass 2  exit
            Actual steps: entry · beforeTimers · beforeSources · source(s) · beforeTimers · beforeSources · beforeWaiting · afterWaiting · exit
            """])
    }

    @Test func misplacedMissingAndUnexpectedStepsOfACommit() {
        let text = LoopOrdering.mismatch(
            expected: [.source("s"), .timer("t1"), .layout("root"), .commit, .block("b")],
            actual: LoopStepPlacement.placements(in: TraceFixture.timerSourceCommit,
                                                 selection: LoopStepSelection(kinds: [.callouts, .commits])))
        #expect(text == """
            Loop steps differ from the expected order (5 expected, 5 happened): 1 out of place, 1 missing, 1 unexpected.
              - source(s) — expected here; it happened at #2 in pass 2 (S2)
                #1 pass 1  timer(t1)
              + #2 pass 2  source(s) — S2: signalled sources0 run after BeforeSources and the first blocks, by order; expected earlier
                #3 pass 3  layout(root)
              + #4 pass 3  display(root) — TX2: commit #1 displays only after all of its layout; not expected
                #5 pass 3  commit
              - block(b) — expected here; it did not happen
            Actual steps: timer(t1) · source(s) · layout(root) · display(root) · commit
            """)
    }

    @Test func aStepThatNeverHappenedNamesTheRuleThatWouldHaveMadeIt() {
        let text = LoopOrdering.mismatch(expected: [.timer("late"), .display("root")], actual: [])
        #expect(text == """
            Loop steps differ from the expected order (2 expected, 0 happened): 0 out of place, 2 missing, 0 unexpected.
              - timer(late) — expected here; it did not happen: a timer fires only after a wait that reached its deadline (L-b); advance the clock past it
              - display(root) — expected here; it did not happen: nothing was committed (TX7: with nothing marked a commit does nothing)
            Actual steps: (none)
            """)
    }

    @Test func equalStepsGiveNoText() {
        let placements = LoopStepPlacement.placements(in: TraceFixture.timerSourceCommit, selection: LoopStepSelection(kinds: [.callouts]))
        #expect(LoopOrdering.mismatch(expected: [.timer("t1"), .source("s")], actual: placements) == nil)
    }

    @Test func unreadableExpectationsAreReportedWithTheStep() {
        let collected = CollectingLoopTestReporter()
        LoopTestHarness.run(reporter: collected) { harness in
            #expect(!harness.expectSteps("entry · sourse(s)"))
        }
        #expect(collected.messages == [
            "The expected steps cannot be read: step 2 \"sourse(s)\": unknown name \"sourse\"; expected one of entry, "
                + "beforeTimers, beforeSources, beforeWaiting, afterWaiting, exit, commit, source(…), port(…), fd(…), "
                + "timer(…), block(…), mainQueue(…), job(…), observer(…), layout(…), display(…), log(…), mark(…)",
        ])
    }

    @Test func theBuilderAndTheTextFormSayTheSame() {
        LoopTestHarness.run { harness in
            let first = harness.addSource("a") {}
            let second = harness.addSource("b", order: 1) {}
            harness.signal(second)
            harness.signal(first)
            harness.runTurn()
            let sources = LoopStepSelection(kinds: [.callouts])
            harness.expectSteps("source(a) · source(b)", selection: sources)   // S2: by order, not by signal time
            harness.expectSteps(selection: sources) {
                for name in ["a", "b"] { LoopStep.source(name) }
            }
            harness.expectSteps(selection: LoopStepSelection(kinds: [.activities])) {
                LoopStep.entry
                LoopStep.beforeTimers
                LoopStep.beforeSources
                if harness.loop.passCount == 2 {
                    [.beforeTimers, .beforeSources]
                }
                LoopStep.beforeWaiting
                LoopStep.afterWaiting
                LoopStep.exit
            }
        }
    }
}
