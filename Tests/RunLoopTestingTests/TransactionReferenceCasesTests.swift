import RunLoopTesting
import Testing

/// The fifteen commit rules TX1–TX15 of Docs/Rules.md (the cases of `TransactionReferenceCases`),
/// each re-expressed on a real loop with the toolkit in ten lines or fewer.
@Suite struct TransactionReferenceCasesWithTheToolkit {
    private let commits = LoopStepSelection(kinds: [.commits])
    private let commitsAndLogs = LoopStepSelection(kinds: [.commits, .logs])

    @Test func tx01MarksCoalesce() {
        LoopTestHarness.run { h in
            let v = Layer(name: "v")
            for _ in 0..<3 { v.setNeedsLayout(); v.setNeedsDisplay() }
            h.runTurn()
            h.runTurn()
            h.expectSteps("layout(v) · display(v) · commit", selection: commits)
        }
    }

    @Test func tx02LayoutThenDisplayThenCommitThenCompletions() {
        LoopTestHarness.run { h in
            let c = Layer(name: "c"), b = Layer(name: "b"), a = Layer(name: "a")
            a.onLayout = { _ in c.setNeedsLayout() }
            LayerTransaction.setCompletionBlock { _ in h.log("completion") }
            b.setNeedsDisplay()
            a.setNeedsLayout()
            h.runTurn()
            h.expectSteps("layout(a) · layout(c) · display(b) · commit · log(completion)", selection: commitsAndLogs)
        }
    }

    @Test func tx03TopDownLayoutOnce() {
        LoopTestHarness.run { h in
            let p = Layer(name: "P"), c = Layer(name: "C"), g = Layer(name: "G")
            p.addSublayer(c)
            c.addSublayer(g)
            p.onLayout = { _ in c.layoutIfNeeded() }
            g.setNeedsLayout(); c.setNeedsLayout(); p.setNeedsLayout()
            h.runTurn()
            h.expectSteps("layout(P) · layout(C) · layout(G) · commit", selection: commits)
        }
    }

    @Test func tx04RedirtiedDuringLayoutSameCommit() {
        LoopTestHarness.run { h in
            let q = Layer(name: "Q"), p = Layer(name: "P")
            q.addSublayer(p)
            var again = true
            p.onLayout = { _ in if again { again = false; q.setNeedsLayout() } }
            q.setNeedsLayout(); p.setNeedsLayout()
            h.runTurn()
            h.expectSteps("layout(Q) · layout(P) · layout(Q) · commit", selection: commits)
            #expect(h.steps(commits)[2].rule.id == "TX4")
        }
    }

    @Test func tx05MarkedDuringDisplayNextCommitWithAWakeUp() {
        LoopTestHarness.run { h in
            let b = Layer(name: "b"), c = Layer(name: "c"), a = Layer(name: "a")
            var first = true
            a.onDisplay = { _, _ in if first { first = false; b.setNeedsDisplay(); c.setNeedsLayout() } }
            a.setNeedsDisplay()
            h.advance(by: .milliseconds(1))
            h.expectSteps("display(a) · commit · layout(c) · display(b) · commit", selection: commits)
            #expect(h.frames.frames.map(\.reason) == [.beforeWaiting, .beforeWaiting])   // woken, turned once more
        }
    }

    @Test func tx06ObserverOrderAroundTheCommit() {
        LoopTestHarness.run { h in
            let early = Layer(name: "early"), late = Layer(name: "late")
            var turn = 0
            h.addObserver("o1000000", activities: [.beforeWaiting, .exit], order: 1_000_000) { _ in turn += 1; if turn == 1 { early.setNeedsLayout() } }
            h.addObserver("o0xFFFFFF", activities: [.beforeWaiting, .exit], order: 0xFFFFFF) { _ in if turn == 1 { late.setNeedsLayout() } }
            h.standardObservers.commits.addBeforeCommitHandler { _ in h.log("pre") }
            h.standardObservers.commits.addAfterCommitHandler { _ in h.log("post") }
            h.runTurn()
            h.expectSteps("observer(o1000000) · log(pre) · layout(early) · commit · log(post) · observer(o0xFFFFFF) · observer(o1000000) · log(pre) · layout(late) · commit · log(post) · observer(o0xFFFFFF)",
                          selection: LoopStepSelection(kinds: [.callouts, .commits, .logs]))
        }
    }

    @Test func tx07IdleIsSilent() {
        LoopTestHarness.run { h in
            h.pipeline.addBeforeCommitHook { h.log("beforeHook") }
            h.pipeline.addAfterCommitHook { _ in h.log("afterHook") }
            for _ in 0..<3 { h.runTurn() }
            h.expectSteps("", selection: commitsAndLogs)
            Layer(name: "v").setNeedsLayout()
            h.runTurn()
            h.expectSteps("log(beforeHook) · layout(v) · commit · log(afterHook)", selection: commitsAndLogs)
        }
    }

    @Test func tx08OnlyTheOutermostExplicitCommitCommits() throws {
        try LoopTestHarness.run { h in
            let v = Layer(name: "v")
            LayerTransaction.begin(); LayerTransaction.begin()
            v.setNeedsLayout(); v.setNeedsDisplay()
            try LayerTransaction.commit()
            h.expectSteps("", selection: commits)
            try LayerTransaction.commit()
            h.expectSteps("layout(v) · display(v) · commit", selection: commits)
            #expect(h.steps(commits).last?.rule.id == "TX8")
            #expect(throws: TransactionError.self) { try LayerTransaction.commit() }
        }
    }

    @Test func tx09ExplicitInsideImplicitWaitsForTheLoop() throws {
        try LoopTestHarness.run { h in
            let a = Layer(name: "a"), b = Layer(name: "b")
            a.setNeedsLayout()
            LayerTransaction.begin(); b.setNeedsLayout(); try LayerTransaction.commit()
            h.expectSteps("", selection: commits)
            h.runTurn()
            h.expectSteps("layout(a) · layout(b) · commit", selection: commits)
            #expect(h.steps(commits).last?.rule.id == "TX6")
        }
    }

    @Test func tx10FlushNowOrAtTheOutermostCommit() throws {
        try LoopTestHarness.run { h in
            let a = Layer(name: "a"), b = Layer(name: "b")
            a.setNeedsLayout(); LayerTransaction.flush()
            a.setNeedsLayout(); LayerTransaction.begin(); b.setNeedsLayout(); LayerTransaction.flush()
            h.expectSteps("layout(a) · commit", selection: commits)
            try LayerTransaction.commit()
            h.expectSteps("layout(a) · commit · layout(a) · layout(b) · commit", selection: commits)
            #expect(h.steps(commits).filter { $0.step == .commit }.map(\.rule.id) == ["TX10", "TX10"])
        }
    }

    @Test func tx11InnermostPropertyWins() throws {
        try LoopTestHarness.run { _ in
            var seen: [Duration] = []
            LayerTransaction.begin(); try LayerTransaction.setAnimationDuration(.seconds(1))
            LayerTransaction.begin(); seen.append(LayerTransaction.animationDuration)
            try LayerTransaction.setAnimationDuration(.seconds(2)); seen.append(LayerTransaction.animationDuration)
            try LayerTransaction.commit(); seen.append(LayerTransaction.animationDuration)
            try LayerTransaction.commit(); seen.append(LayerTransaction.animationDuration)
            #expect(seen == [.seconds(1), .seconds(2), .seconds(1), .milliseconds(250)])
        }
    }

    @Test func tx12CompletionsNowOnReplaceOrWhenAnimationsEnd() throws {
        try LoopTestHarness.run { h in
            LayerTransaction.begin(); LayerTransaction.setCompletionBlock { h.log("A:\($0)") }; try LayerTransaction.commit()
            LayerTransaction.begin(); try LayerTransaction.setAnimationDuration(.seconds(1)); LayerTransaction.addAnimation()
            LayerTransaction.setCompletionBlock { h.log("B:\($0)") }; try LayerTransaction.commit()
            LayerTransaction.begin(); LayerTransaction.setCompletionBlock { h.log("C:\($0)") }
            LayerTransaction.setCompletionBlock { _ in }; try LayerTransaction.commit()
            h.advance(by: .seconds(1))
            h.expectSteps("commit · log(A:committedWithoutAnimations) · commit · log(C:replaced) · commit · timer(transactionCompletion) · log(B:animationsFinished)",
                          selection: LoopStepSelection(kinds: [.callouts, .commits, .logs]))
            #expect(h.steps(LoopStepSelection(kinds: [.logs])).last?.time == LoopInstant(nanoseconds: 1_000_000_000))
        }
    }

    @Test func tx13ABusyLoopFlushesWhenTooLate() {
        LoopTestHarness.run { h in
            let v = Layer(name: "v")
            var count = 0, busy: LoopSource?
            busy = h.addSource("busy") {
                count += 1; h.log("S\(count)"); if count == 1 || count == 5 { v.setNeedsLayout() }
                try? h.clock.advance(by: .milliseconds(5)); if count < 6 { busy?.signal() }   // 5 ms per callout
            }
            h.signal(busy!); h.runTurn()
            h.expectSteps("log(S1) · log(S2) · log(S3) · log(S4) · layout(v) · commit · log(S5) · log(S6) · layout(v) · commit", selection: commitsAndLogs)
            #expect(h.steps(commits).filter { $0.step == .commit }.map(\.rule.id) == ["TX13", "TX6"])
        }
    }

    @Test func tx14ANestedRunCommitsAtItsExitAndKeepsOuterCleanup() {
        LoopTestHarness.run { h in
            let v = Layer(name: "v"), w = Layer(name: "w")
            let outer = h.addSource("outer") {
                h.pipeline.addPostCommitCallback { h.log("outer cleanup") }
                v.setNeedsLayout(); h.loop.run(mode: .default, timeout: .zero)   // a nested run: its Exit commits v
                h.log("outer callout ends")
            }
            h.signal(outer); h.runTurn()
            w.setNeedsLayout(); h.runTurn()
            h.expectSteps("layout(v) · commit · log(outer callout ends) · layout(w) · commit · log(outer cleanup)", selection: commitsAndLogs)
        }
    }

    @Test func tx15PostCommitCallbacksRunAfterTheirCommit() {
        LoopTestHarness.run { h in
            var first = true
            h.perform("register") { h.pipeline.addPostCommitCallback { h.log("P-early") } }
            h.runTurn()   // registering one does not make a commit
            let b = Layer(name: "b"), a = Layer(name: "a")
            b.onDisplay = { _, _ in h.pipeline.addPostCommitCallback { h.log("P-from-D") } }
            a.onLayout = { _ in if first { first = false; h.pipeline.addPostCommitCallback { h.log("P-from-L"); h.pipeline.addPostCommitCallback { h.log("P-from-P") } } } }
            a.setNeedsLayout(); b.setNeedsDisplay(); h.runTurn()
            a.setNeedsLayout(); h.runTurn()
            h.expectSteps("layout(a) · display(b) · commit · log(P-early) · log(P-from-L) · log(P-from-D) · layout(a) · commit · log(P-from-P)", selection: commitsAndLogs)
        }
    }
}
