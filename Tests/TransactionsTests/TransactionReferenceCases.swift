import Testing
import RunLoopDiagnostics
@testable import Transactions

/// One test per commit rule (TX1–TX15 in Docs/Rules.md), asserting the exact callout sequence.
/// Cases 6, 13 and 14 need a run loop; here they are played by `ObserverDriver` (observer calls in
/// CF order) — the umbrella adds the same cases on the real loop.
@Suite("TransactionReferenceCases")
struct TransactionReferenceCases {
    /// TX1 Coalescing: three marks of each kind → one layout, one display, one commit.
    @Test func case01() {
        let h = Harness()
        let driver = ObserverDriver(pipeline: h.pipeline, log: nil)
        h.run {
            let v = h.layer("v")
            for _ in 0..<3 { v.setNeedsLayout() }
            for _ in 0..<3 { v.setNeedsDisplay() }
            #expect(h.log.entries.isEmpty)           // marks only note the request
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["L(v)", "D(v)", "C"])
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == [])
        }
    }

    /// TX2 Phase order: all layouts, then displays, then the commit, then completions.
    @Test func case02() {
        let h = Harness()
        let driver = ObserverDriver(pipeline: h.pipeline, log: nil)
        h.run {
            let c = h.layer("c")
            let b = h.layer("b")
            let a = h.layer("a", layout: { _ in c.setNeedsLayout() })   // a later layout, same commit
            LayerTransaction.setCompletionBlock { reason in h.log("Cb:\(reason)") }
            b.setNeedsDisplay()
            a.setNeedsLayout()
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["L(a)", "L(c)", "D(b)", "C", "Cb:committedWithoutAnimations"])
        }
    }

    /// TX3 Top-down layout, once: parents before children (by depth, not by mark order), no layer
    /// laid out twice in a round.
    @Test func case03() {
        let h = Harness()
        let driver = ObserverDriver(pipeline: h.pipeline, log: nil)
        h.run {
            // P's layout lays out its child C: C is laid out once, after P.
            let child = h.layer("C")
            let parent = h.layer("P", layout: { _ in child.layoutIfNeeded() })
            parent.addSublayer(child)
            child.setNeedsLayout()          // child marked first
            parent.setNeedsLayout()
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["L(P)", "L(C)", "C"])

            // P does not touch its children: still P before C, grandchild last, whatever the mark order.
            let p2 = h.layer("P2"), c2 = h.layer("C2"), g2 = h.layer("G2")
            p2.addSublayer(c2)
            c2.addSublayer(g2)
            g2.setNeedsLayout()
            c2.setNeedsLayout()
            p2.setNeedsLayout()
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["L(P2)", "L(C2)", "L(G2)", "C"])
        }
    }

    /// TX4 Re-dirty in layout → same flush, before any display; capped at 4 rounds with a diagnostic.
    @Test func case04() {
        let h = Harness()
        let driver = ObserverDriver(pipeline: h.pipeline, log: nil)
        h.run {
            let root = h.layer("Q")                       // laid out before P (shallower)…
            var redirtied = false
            let p = h.layer("P", layout: { _ in
                if !redirtied { redirtied = true; root.setNeedsLayout() }   // …and re-dirtied by P
            })
            let fresh = h.layer("R")                      // not laid out yet when P dirties it
            let pWithFresh = h.layer("P'", layout: { _ in fresh.setNeedsLayout() })
            root.addSublayer(p)
            root.addSublayer(pWithFresh)
            let x = h.layer("x")
            x.setNeedsDisplay()
            root.setNeedsLayout()
            p.setNeedsLayout()
            pWithFresh.setNeedsLayout()
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["L(Q)", "L(P)", "L(P')", "L(Q)", "L(R)", "D(x)", "C"])
            #expect(h.diagnostics.isEmpty)

            // A layout that always re-dirties itself: 4 rounds, diagnostic naming it, rest next commit.
            let loop = h.layer("feedback", layout: { layer in layer.setNeedsLayout() })
            let y = h.layer("y")
            loop.setNeedsLayout()
            y.setNeedsDisplay()
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["L(feedback)", "L(feedback)", "L(feedback)", "L(feedback)", "D(y)", "C"])
            #expect(h.diagnostics.map(\.id) == [.commitLayoutLoop])
            #expect(h.diagnostics.first?.item == "feedback")
            #expect(h.diagnostics.first?.severity == .warning)
            #expect(h.diagnostics.first?.message.contains("4 rounds") == true)
            #expect(h.sink.snapshots.last?.layoutDeferred.map(\.name) == ["feedback"])
            #expect(loop.needsLayout)
            #expect(h.pipeline.needsCommit)               // left for the next commit…
            #expect(h.wakeUps == 1)                       // …and the loop is asked to turn again
            loop.onLayout = { _ in h.log("L(feedback) settled") }
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["L(feedback) settled", "C"])
        }
    }

    /// TX5 Re-dirty in display → next flush, with a wake-up request.
    @Test func case05() {
        let h = Harness()
        let driver = ObserverDriver(pipeline: h.pipeline, log: nil)
        h.run {
            let b = h.layer("b")
            let c = h.layer("c")
            var first = true
            let a = h.layer("a", display: { _, _ in
                if first { first = false; b.setNeedsDisplay(); c.setNeedsLayout() }
            })
            a.setNeedsDisplay()
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["D(a)", "C"])
            #expect(h.wakeUps == 1)
            #expect(h.pipeline.needsCommit)
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["L(c)", "D(b)", "C"])
            #expect(h.wakeUps == 1)
        }
    }

    /// TX6 Observer order: before-commit (1999000), commit (2000000), after-commit (2001000) on
    /// BeforeWaiting and on Exit; an observer at 1000000 that dirties is included, one at 0xFFFFFF
    /// lands in the next flush.
    @Test func case06() {
        let h = Harness()
        let driver = ObserverDriver(pipeline: h.pipeline, log: h.log)
        h.run {
            let early = h.layer("early"), late = h.layer("late")
            var turn = 0
            driver.add(order: 1_000_000) { _ in
                turn += 1
                h.log("obs1000000")
                if turn == 1 { early.setNeedsLayout() }
            }
            driver.add(order: 0xFFFFFF) { _ in
                h.log("obs0xFFFFFF")
                if turn == 1 { late.setNeedsLayout() }
            }
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["obs1000000", "pre", "L(early)", "C", "post", "obs0xFFFFFF"])
            driver.notify(.exit)
            #expect(h.log.take() == ["obs1000000", "pre", "L(late)", "C", "post", "obs0xFFFFFF"])
            #expect(h.sink.snapshots.map(\.reason) == [.beforeWaiting, .exit])
        }
    }

    /// TX7 Idle = silent: no layout, display, commit, hook or completion callouts.
    @Test func case07() {
        let h = Harness()
        let driver = ObserverDriver(pipeline: h.pipeline, log: nil)
        h.run {
            h.pipeline.addBeforeCommitHook { h.log("beforeHook") }
            h.pipeline.addAfterCommitHook { _ in h.log("afterHook") }
            let v = h.layer("v")
            for _ in 0..<3 { driver.notify(.beforeWaiting); driver.notify(.exit) }
            #expect(h.log.take() == [])
            #expect(h.pipeline.frameNumber == 0)
            v.setNeedsLayout()
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["beforeHook", "L(v)", "C", "afterHook"])
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == [])
        }
    }

    /// TX8 Explicit nesting: only the outermost commit commits, synchronously; a commit with
    /// nothing open is an error.
    @Test func case08() throws {
        let h = Harness()
        try h.run {
            let v = h.layer("v")
            LayerTransaction.begin()
            LayerTransaction.begin()
            v.setNeedsLayout()
            v.setNeedsDisplay()
            try LayerTransaction.commit()
            #expect(h.log.take() == [])
            try LayerTransaction.commit()
            #expect(h.log.take() == ["L(v)", "D(v)", "C"])
            #expect(h.sink.snapshots.last?.reason == .explicitCommit)
            #expect(throws: TransactionError.self) { try LayerTransaction.commit() }
            #expect(h.log.take() == [])
        }
    }

    /// TX9 Explicit inside implicit: nothing until the run loop's commit, which carries both.
    @Test func case09() throws {
        let h = Harness()
        let driver = ObserverDriver(pipeline: h.pipeline, log: nil)
        try h.run {
            let a = h.layer("a"), b = h.layer("b")
            a.setNeedsLayout()
            LayerTransaction.begin()
            b.setNeedsLayout()
            try LayerTransaction.commit()
            #expect(h.log.take() == [])
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["L(a)", "L(b)", "C"])
        }
    }

    /// TX10 flush(): immediate with no explicit transaction; deferred to the outermost commit inside one.
    @Test func case10() throws {
        let h = Harness()
        try h.run {
            let a = h.layer("a"), b = h.layer("b")
            a.setNeedsLayout()
            LayerTransaction.flush()
            #expect(h.log.take() == ["L(a)", "C"])

            a.setNeedsLayout()                 // implicit transaction
            LayerTransaction.begin()
            b.setNeedsLayout()
            LayerTransaction.flush()
            #expect(h.log.take() == [])
            try LayerTransaction.commit()           // outermost: the flush happens here
            #expect(h.log.take() == ["L(a)", "L(b)", "C"])
            #expect(h.sink.snapshots.last?.reason == .flush)
            #expect(!h.pipeline.needsCommit)

            LayerTransaction.flush()                // nothing open: nothing happens
            #expect(h.log.take() == [])
        }
    }

    /// TX11 Property scoping: innermost wins, popping restores.
    @Test func case11() throws {
        let h = Harness()
        try h.run {
            var seen: [Duration] = []
            LayerTransaction.begin()
            try LayerTransaction.setAnimationDuration(.seconds(1))
            LayerTransaction.begin()
            seen.append(LayerTransaction.animationDuration)
            try LayerTransaction.setAnimationDuration(.seconds(2))
            seen.append(LayerTransaction.animationDuration)
            try LayerTransaction.commit()
            seen.append(LayerTransaction.animationDuration)
            try LayerTransaction.commit()
            seen.append(LayerTransaction.animationDuration)
            #expect(seen == [.seconds(1), .seconds(2), .seconds(1), CommitPipeline.defaultAnimationDuration])
            #expect(CommitPipeline.defaultAnimationDuration == .milliseconds(250))
        }
    }

    /// TX12 Completion blocks: with no animation, at the end of the commit that carried them; with
    /// one, when it ends; a replaced block at once with `.replaced`; changes made inside one go into
    /// a new implicit transaction with default settings.
    @Test func case12() throws {
        let h = Harness()
        let driver = ObserverDriver(pipeline: h.pipeline, log: nil)
        try h.run {
            // No animation: right after the commit, synchronously inside commit().
            LayerTransaction.begin()
            LayerTransaction.setCompletionBlock { h.log("A:\($0)") }
            try LayerTransaction.commit()
            #expect(h.log.take() == ["C", "A:committedWithoutAnimations"])

            // With an animation of 1 s: after 1 s of the pipeline clock.
            LayerTransaction.begin()
            try LayerTransaction.setAnimationDuration(.seconds(1))
            LayerTransaction.setCompletionBlock { h.log("A:\($0)") }
            LayerTransaction.addAnimation()
            try LayerTransaction.commit()
            #expect(h.log.take() == ["C"])
            try h.clock.advance(by: .nanoseconds(999_999_999))
            #expect(h.pipeline.runDueCompletions() == 0)
            try h.clock.advance(by: .nanoseconds(1))
            #expect(h.pipeline.runDueCompletions() == 1)
            #expect(h.log.take() == ["A:animationsFinished"])

            // Replacing fires the old block at once.
            LayerTransaction.begin()
            LayerTransaction.setCompletionBlock { h.log("A:\($0)") }
            LayerTransaction.setCompletionBlock { h.log("B:\($0)") }
            #expect(h.log.take() == ["A:replaced"])
            try LayerTransaction.commit()
            #expect(h.log.take() == ["C", "B:committedWithoutAnimations"])

            // Changes made inside the block: new implicit transaction, default settings, next BeforeWaiting.
            let v = h.layer("v")
            LayerTransaction.begin()
            try LayerTransaction.setAnimationDuration(.seconds(1))
            LayerTransaction.setCompletionBlock { _ in
                h.log("A duration=\(LayerTransaction.animationDuration)")
                v.setNeedsLayout()
            }
            try LayerTransaction.commit()
            #expect(h.log.take() == ["C", "A duration=0.25 seconds"])
            #expect(h.pipeline.needsCommit)
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["L(v)", "C"])
        }
    }

    /// TX13 A busy loop still commits: kept busy by sources0 it never reaches BeforeWaiting, so each
    /// source0 callout ends with `flushIfTooLate()`, which commits once the marks are older than the
    /// budget (test driver: a source0 callout per iteration, then the interceptor's call).
    @Test func case13() throws {
        let h = Harness()
        try h.run {
            let v = h.layer("v")
            for iteration in 1...6 {
                h.log("S\(iteration)")
                if iteration == 1 || iteration == 5 { v.setNeedsLayout() }
                try h.clock.advance(by: .nanoseconds(5_000_000))          // each callout takes 5 ms
                if h.pipeline.flushIfTooLate() { h.log("(forced)") }
            }
            // Marked at 0 ms; checked at 5, 10, 15 (< 16.67 ms budget), 20 → forced flush.
            #expect(h.log.take() == ["S1", "S2", "S3", "S4", "L(v)", "C", "(forced)", "S5", "S6"])
            #expect(h.sink.snapshots.map(\.reason) == [.tooLate])
            #expect(h.pipeline.needsCommit)                        // the 5th callout's mark waits (10 ms so far)

            // The budget is configurable.
            try h.pipeline.setTooLateBudget(.milliseconds(50))
            try h.clock.advance(by: .nanoseconds(30_000_000))              // 40 ms since the mark
            #expect(!h.pipeline.flushIfTooLate())
            try h.clock.advance(by: .nanoseconds(10_000_000))              // 50 ms
            #expect(h.pipeline.flushIfTooLate())
            #expect(h.log.take() == ["L(v)", "C"])
        }
    }

    /// TX14 Nested run: flush at the nested run's Exit, before control returns to the outer code;
    /// cleanup registered at the outer level is not run by that nested commit.
    @Test func case14() {
        let h = Harness()
        let driver = ObserverDriver(pipeline: h.pipeline, log: h.log)
        h.run {
            let v = h.layer("v"), w = h.layer("w")
            h.pipeline.runLevel = 1                                   // outer run's Entry
            // An outer-level source callout that spins a nested run:
            h.log("outer callout begins")
            h.pipeline.addPostCommitCallback { h.log("outer cleanup") }
            h.pipeline.runLevel = 2                                   // nested run's Entry
            h.log("nested source")
            v.setNeedsLayout()
            h.pipeline.addPostCommitCallback { h.log("nested cleanup") }
            driver.notify(.exit)                                      // nested run's Exit
            h.pipeline.runLevel = 1
            h.log("outer callout ends")
            #expect(h.log.take() == ["outer callout begins", "nested source", "pre", "L(v)", "C", "nested cleanup",
                                     "post", "outer callout ends"])
            // Back in the outer run: an idle BW runs nothing (cleanups never force a commit)…
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["pre", "post"])
            // …the next real commit at the outer level runs the outer cleanup.
            w.setNeedsLayout()
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["pre", "L(w)", "C", "outer cleanup", "post"])
        }
    }

    /// TX15 Post-commit callbacks: registered during layout or display → after this commit; from
    /// inside a post-commit callback → after the next commit; registering one schedules no flush.
    @Test func case15() {
        let h = Harness()
        let driver = ObserverDriver(pipeline: h.pipeline, log: nil)
        h.run {
            h.pipeline.addPostCommitCallback { h.log("P0") }
            #expect(!h.pipeline.needsCommit)
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == [])                               // no flush scheduled by it

            let b = h.layer("b", display: { _, _ in h.pipeline.addPostCommitCallback { h.log("P-from-D") } })
            let a = h.layer("a", layout: { _ in
                h.pipeline.addPostCommitCallback {
                    h.log("P-from-L")
                    h.pipeline.addPostCommitCallback { h.log("P-from-P") }
                }
            })
            a.setNeedsLayout()
            b.setNeedsDisplay()
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["L(a)", "D(b)", "C", "P0", "P-from-L", "P-from-D"])
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == [])                               // still no commit of its own
            a.setNeedsLayout()
            driver.notify(.beforeWaiting)
            #expect(h.log.take() == ["L(a)", "C", "P-from-P", "P-from-L"])
        }
    }
}
