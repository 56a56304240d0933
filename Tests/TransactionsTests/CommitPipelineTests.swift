import Testing
import RunLoopDiagnostics
@testable import Transactions

@Suite("CommitPipeline")
struct CommitPipelineTests {
    @Test func pendingSinceIsTheFirstMarkOrTheEndOfTheCommitThatDeferredWork() throws {
        let h = Harness()
        try h.run {
            #expect(h.pipeline.pendingSince == nil)
            let start = h.clock.now
            let v = h.layer("v")
            v.setNeedsLayout()
            #expect(h.pipeline.pendingSince == start)
            try h.clock.advance(by: .nanoseconds(7))
            v.setNeedsDisplay()                              // later marks do not move it
            #expect(h.pipeline.pendingSince == start)

            // A commit that takes 3 ms and whose display marks w for the next commit.
            let w = h.layer("w")
            let slow = h.layer("slow", display: { _, _ in try? h.clock.advance(by: .milliseconds(3)); w.setNeedsDisplay() })
            slow.setNeedsDisplay()
            h.pipeline.commitIfNeeded(reason: .beforeWaiting)
            #expect(h.pipeline.lastCommitTime == h.clock.now)
            #expect(h.pipeline.pendingSince == h.clock.now)  // not the in-commit mark time
            try h.clock.advance(by: h.pipeline.tooLateBudget - .nanoseconds(1))
            #expect(!h.pipeline.flushIfTooLate())
            #expect(h.pipeline.flushIfTooLate(now: h.clock.now.advanced(by: .nanoseconds(1))))
            #expect(h.pipeline.pendingSince == nil)
            #expect(!h.pipeline.flushIfTooLate(now: .distantFuture))   // nothing pending: never
        }
    }

    @Test func commitIfNeededWaitsForAnOpenExplicitTransaction() throws {
        let h = Harness()
        try h.run {
            let a = h.layer("a")
            a.setNeedsLayout()
            LayerTransaction.begin()
            h.pipeline.commitIfNeeded(reason: .beforeWaiting)   // e.g. a nested run inside begin…commit
            #expect(!h.pipeline.flushIfTooLate(now: .distantFuture))
            #expect(h.log.take() == [])
            try LayerTransaction.commit()
            #expect(h.log.take() == [])                         // implicit beneath: waits for the loop
            h.pipeline.commitIfNeeded(reason: .beforeWaiting)
            #expect(h.log.take() == ["L(a)", "C"])
        }
    }

    @Test func wakeUpIsRequestedOncePerCommitAndOnlyForWorkDeferredByIt() {
        let h = Harness()
        h.run {
            let targets = (0..<3).map { h.layer("t\($0)") }
            let a = h.layer("a", display: { _, _ in for t in targets { t.setNeedsDisplay() } })
            a.setNeedsDisplay()
            #expect(h.wakeUps == 0)                             // ordinary marks never wake
            h.pipeline.commitIfNeeded(reason: .beforeWaiting)
            #expect(h.wakeUps == 1)
            h.pipeline.commitIfNeeded(reason: .beforeWaiting)
            #expect(h.log.take() == ["D(a)", "C", "D(t0)", "D(t1)", "D(t2)", "C"])
            #expect(h.wakeUps == 1)
        }
    }

    @Test func snapshotAndFrameLog() {
        let pipeline = CommitPipeline(clock: ManualTransactionClock())
        pipeline.asCurrent {
            let log = pipeline.frameLog!
            let root = Layer(name: "root"), child = Layer(name: "child")
            root.addSublayer(child)
            child.setNeedsLayout()
            root.setNeedsLayout()
            child.setNeedsDisplay(in: LayerRect(x: 1, y: 2, width: 3, height: 4))
            pipeline.commitIfNeeded(reason: .beforeWaiting)
            root.setNeedsDisplay()
            pipeline.commitIfNeeded(reason: .exit)
            #expect(log.frames.map(\.frameNumber) == [1, 2])
            #expect(log.frames[0].laidOut.map(\.name) == ["root", "child"])
            #expect(log.frames[0].displayed == [DisplayedLayer(layer: LayerIdentity(child), dirtyRect: LayerRect(x: 1, y: 2, width: 3, height: 4))])
            #expect(log.frames[1].reason == .exit && log.frames[1].laidOut.isEmpty)
            #expect(log.frames[1].displayed.map(\.layer.name) == ["root"])
        }
        let small = FrameLog(capacity: 2)
        pipeline.sink = small
        pipeline.asCurrent {
            for _ in 0..<5 { Layer().setNeedsLayout(); LayerTransaction.flush() }
        }
        #expect(small.frames.map(\.frameNumber) == [6, 7])
        #expect(small.deliveredCount == 5)
    }

    @Test func hooksRunInRegistrationOrderAndCanBeRemoved() {
        let h = Harness()
        h.run {
            let v = h.layer("v")
            let first = h.pipeline.addBeforeCommitHook { h.log("before1"); v.setNeedsDisplay() }   // same commit
            h.pipeline.addBeforeCommitHook { h.log("before2") }
            h.pipeline.addAfterCommitHook { snapshot in h.log("after#\(snapshot.frameNumber)") }
            v.setNeedsLayout()
            LayerTransaction.flush()
            #expect(h.log.take() == ["before1", "before2", "L(v)", "D(v)", "C", "after#1"])
            h.pipeline.removeHook(first)
            v.setNeedsLayout()
            LayerTransaction.flush()
            #expect(h.log.take() == ["before2", "L(v)", "C", "after#2"])
        }
    }

    @Test func postCommitCallbacksHonourRunLevels() {
        let h = Harness()
        h.run {
            let v = h.layer("v")
            h.pipeline.runLevel = 1
            h.pipeline.addPostCommitCallback { h.log("level1 A") }
            h.pipeline.addPostCommitCallback(runLevel: 3) { h.log("level3") }
            h.pipeline.addPostCommitCallback { h.log("level1 B") }
            h.pipeline.runLevel = 2
            v.setNeedsLayout()
            LayerTransaction.flush()                               // a nested level's commit
            #expect(h.log.take() == ["L(v)", "C", "level3"])
            #expect(h.pipeline.pendingPostCommitCallbackCount == 2)
            h.pipeline.runLevel = 0                           // back out of every run
            v.setNeedsLayout()
            LayerTransaction.flush()
            #expect(h.log.take() == ["L(v)", "C", "level1 A", "level1 B"])
        }
    }

    @Test func completionWaitsForTheLongestAnimationOfItsGroupIncludingNestedOnes() throws {
        let h = Harness()
        try h.run {
            LayerTransaction.begin()
            LayerTransaction.setCompletionBlock { h.log("outer:\($0)") }
            try LayerTransaction.addAnimation(duration: .milliseconds(500))
            LayerTransaction.begin()
            LayerTransaction.setCompletionBlock { h.log("inner:\($0)") }
            try LayerTransaction.addAnimation(duration: .seconds(1))
            try LayerTransaction.commit()
            try LayerTransaction.addAnimation(duration: .milliseconds(250))   // outer group only
            try LayerTransaction.commit()
            #expect(h.log.take() == ["C"])
            try h.clock.advance(by: .milliseconds(500))
            h.pipeline.runDueCompletions()
            #expect(h.log.take() == [])
            try h.clock.advance(by: .milliseconds(500))
            h.pipeline.runDueCompletions()
            #expect(h.log.take() == ["inner:animationsFinished", "outer:animationsFinished"])
        }
    }

    @Test func anInjectedSchedulerReceivesTheDelay() throws {
        final class RecordingScheduler: CompletionScheduler {
            var delays: [Duration] = []
            var work: [() -> Void] = []
            func schedule(after delay: Duration, _ work: @escaping () -> Void) {
                delays.append(delay)
                self.work.append(work)
            }
        }
        let h = Harness()
        let scheduler = RecordingScheduler()
        h.pipeline.completionScheduler = scheduler
        try h.run {
            LayerTransaction.begin()
            try LayerTransaction.setAnimationDuration(.seconds(2))
            LayerTransaction.setCompletionBlock { h.log("A:\($0)") }
            LayerTransaction.addAnimation()
            try LayerTransaction.commit()
            #expect(scheduler.delays == [.seconds(2)])
            #expect(h.log.take() == ["C"])
            scheduler.work.forEach { $0() }
            #expect(h.log.take() == ["A:animationsFinished"])
            #expect(h.pipeline.runDueCompletions() == 0)      // not the default scheduler
        }
    }

    @Test func arbitraryKeysAndDisableActionsAreScoped() throws {
        let h = Harness()
        try h.run {
            #expect(LayerTransaction.value(forKey: "tag") == nil)
            #expect(!LayerTransaction.disableActions)
            LayerTransaction.begin()
            try LayerTransaction.setValue("outer", forKey: "tag")
            LayerTransaction.disableActions = true
            LayerTransaction.begin()
            #expect(LayerTransaction.value(forKey: "tag") as? String == "outer")
            try LayerTransaction.setValue("inner", forKey: "tag")
            try LayerTransaction.setValue(false, forKey: LayerTransaction.Key.disableActions)
            #expect(LayerTransaction.value(forKey: "tag") as? String == "inner")
            #expect(!LayerTransaction.disableActions)
            try LayerTransaction.setValue(nil, forKey: "tag")      // removes it from the inner scope only
            #expect(LayerTransaction.value(forKey: "tag") as? String == "outer")
            try LayerTransaction.commit()
            #expect(LayerTransaction.disableActions)
            #expect(LayerTransaction.value(forKey: LayerTransaction.Key.animationDuration) == nil)
            try LayerTransaction.commit()
            #expect(LayerTransaction.value(forKey: "tag") == nil)
        }
    }

    @Test func propertySetOutsideATransactionOpensTheImplicitOne() throws {
        let h = Harness()
        try h.run {
            try LayerTransaction.setAnimationDuration(.milliseconds(500))
            #expect(h.pipeline.hasImplicitTransaction && h.pipeline.needsCommit)
            LayerTransaction.setCompletionBlock { h.log("A:\($0)") }
            h.pipeline.commitIfNeeded(reason: .beforeWaiting)
            #expect(h.log.take() == ["C", "A:committedWithoutAnimations"])
            #expect(LayerTransaction.animationDuration == .milliseconds(250))
        }
    }

    @Test func explicitTransactionInsideALayoutCallbackFoldsIntoTheRunningCommit() throws {
        let h = Harness()
        h.run {
            let b = h.layer("b")
            let a = h.layer("a", layout: { _ in
                LayerTransaction.begin()
                LayerTransaction.setCompletionBlock { h.log("inner:\($0)") }
                b.setNeedsLayout()
                try? LayerTransaction.commit()
            })
            a.setNeedsLayout()
            h.pipeline.commitIfNeeded(reason: .beforeWaiting)
            #expect(h.log.take() == ["L(a)", "L(b)", "C", "inner:committedWithoutAnimations"])
            #expect(!h.pipeline.needsCommit)
        }
    }

    @Test func currentIsPerThreadAndAsCurrentRestores() {
        let h = Harness()
        let outer = CommitPipeline.current
        h.run {
            #expect(CommitPipeline.current === h.pipeline)
            let inner = CommitPipeline(clock: h.clock)
            inner.asCurrent { #expect(CommitPipeline.current === inner) }
            #expect(CommitPipeline.current === h.pipeline)
        }
        #expect(CommitPipeline.current === outer)
    }

    /// The layout-loop warning goes to the diagnostics hub with a stable id, one report per
    /// commit, naming every layer left over (in layout order) as its item.
    @Test func layoutLoopIsReportedOnceNamingEveryLayerLeftOver() {
        let h = Harness(maxLayoutRounds: 2)
        h.run {
            let parent = h.layer("loop-parent", layout: { layer in layer.setNeedsLayout() })
            let child = h.layer("loop-child", layout: { layer in layer.setNeedsLayout() })
            parent.addSublayer(child)
            child.setNeedsLayout()
            parent.setNeedsLayout()
            LayerTransaction.flush()
            #expect(h.log.take() == ["L(loop-parent)", "L(loop-child)", "L(loop-parent)", "L(loop-child)", "C"])
            let reported = h.diagnostics
            #expect(reported.count == 1)
            #expect(reported.first?.id == "commit.layout-loop")
            #expect(reported.first?.item == "loop-parent, loop-child")
            #expect(reported.first?.message.contains("2 rounds") == true)
            #expect(reported.first?.message.contains(h.pipeline.threadName) == true)
        }
    }
}
