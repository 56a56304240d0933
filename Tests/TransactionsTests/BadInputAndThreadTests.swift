import Testing
import PThreads
import RunLoopDiagnostics
@testable import Transactions

// Serialized: the thread-exit tests tell their diagnostic apart by the thread's name, and pthread
// ids are reused once a thread was joined.
@Suite("TransactionBadInputAndThreads", .serialized)
struct BadInputAndThreadTests {
    @Test func commitWithoutBeginThrowsAClearError() {
        let h = Harness()
        h.run {
            do throws(TransactionError) {
                try LayerTransaction.commit()
                Issue.record("commit() without begin() did not throw")
            } catch {
                #expect(error == .commitWithoutBegin(thread: h.pipeline.threadName, implicitOpen: false))
                #expect(error.description.contains("no explicit transaction open"))
                #expect(error.description.contains(h.pipeline.threadName))
            }
            // Only the implicit transaction open: still an error, with a hint, and nothing committed.
            h.layer("v").setNeedsLayout()
            #expect(throws: TransactionError.commitWithoutBegin(thread: h.pipeline.threadName, implicitOpen: true)) {
                try LayerTransaction.commit()
            }
            #expect((try? LayerTransaction.commit()) == nil)
            let message = TransactionError.commitWithoutBegin(thread: "t", implicitOpen: true).description
            #expect(message.contains("LayerTransaction.flush()"))
            #expect(h.log.entries.isEmpty)
            #expect(h.pipeline.needsCommit)
        }
    }

    @Test func marksFromAnotherThreadGetThatThreadsTransaction() {
        let h = Harness()
        let results = SharedBox<[String]>([])
        h.run {
            runOnNewPThread {
                let pipeline = CommitPipeline.current
                let sink = FrameLog()
                pipeline.sink = sink
                let layer = Layer(name: "bg")
                layer.onLayout = { _ in results.update { $0.append("L(bg) on its own thread") } }
                layer.setNeedsLayout()
                results.update { $0.append("implicit open: \(pipeline.hasImplicitTransaction)") }
                LayerTransaction.flush()
                results.update { $0.append("frames: \(sink.frames.count), open: \(pipeline.hasImplicitTransaction)") }
            }
            // The test thread's pipeline saw nothing.
            #expect(!h.pipeline.needsCommit)
            #expect(!h.pipeline.hasImplicitTransaction)
            #expect(h.pipeline.frameNumber == 0)
        }
        #expect(results.value == ["implicit open: true", "L(bg) on its own thread", "frames: 1, open: false"])
    }

    @Test func threadExitWithOpenImplicitTransactionWarnsAndLeaksNothing() {
        let recorder = DiagnosticsRecorder(capturing: [.commitThreadExitedUncommitted])
        let threadName = SharedBox("")
        let counter = DeinitCounter()
        let completionCalls = SharedBox(0)
        let pipelineRef = WeakBox(), layerRef = WeakBox()
        runOnNewPThread {
            let pipeline = CommitPipeline.current
            pipelineRef.object = pipeline
            threadName.value = pipeline.threadName
            let root = Layer(name: "root")
            let child = Layer(name: "child")
            root.addSublayer(child)
            layerRef.object = child
            let canary = Canary(counter)
            root.onLayout = { _ in _ = canary }            // the layer (queued) keeps the canary alive
            child.setNeedsDisplay()
            root.setNeedsLayout()
            let blockCanary = Canary(counter)
            LayerTransaction.setCompletionBlock { _ in _ = blockCanary; completionCalls.update { $0 += 1 } }
            pipeline.addPostCommitCallback { _ = Canary(counter) }
            pipeline.addAfterCommitHook { [pipeline] _ in _ = pipeline }   // a cycle the exit must break
            // The thread ends here with the implicit transaction still open.
        }
        let warnings = recorder.diagnostics(withID: .commitThreadExitedUncommitted, item: threadName.value)
        #expect(warnings.count == 1)
        #expect(threadName.value.hasPrefix("thread 0x"))
        #expect(warnings.first?.severity == .warning)
        #expect(warnings.first?.message.contains("implicit transaction open") == true)
        #expect(warnings.first?.message.contains("LayerTransaction.flush()") == true)
        #expect(counter.value == 2)                  // both canaries released: layers and block freed
        #expect(completionCalls.value == 0)          // never committed, so never completed
        #expect(pipelineRef.object == nil)           // the thread's pipeline itself was freed
        #expect(layerRef.object == nil)              // and the dirty layers it held
    }

    @Test func threadExitWithNothingOpenIsSilent() {
        let recorder = DiagnosticsRecorder()
        let threadName = SharedBox("")
        runOnNewPThread {
            threadName.value = CommitPipeline.current.threadName
            Layer(name: "v").setNeedsLayout()
            LayerTransaction.flush()
        }
        #expect(recorder.diagnostics(withID: .commitThreadExitedUncommitted, item: threadName.value).isEmpty)
    }

    @Test func threadExitWithOpenExplicitTransactionNamesIt() {
        let recorder = DiagnosticsRecorder(capturing: [.commitThreadExitedUncommitted])
        let threadName = SharedBox("")
        runOnNewPThread {
            threadName.value = CommitPipeline.current.threadName
            LayerTransaction.begin()
            LayerTransaction.begin()
        }
        let warnings = recorder.diagnostics(withID: .commitThreadExitedUncommitted, item: threadName.value)
        #expect(warnings.count == 1)
        #expect(warnings.first?.message.contains("2 explicit LayerTransaction.begin() not committed") == true)
    }

    @Test func negativeDurationsAreRefusedAndChangeNothing() throws {
        let h = Harness()
        try h.run {
            try LayerTransaction.setAnimationDuration(.seconds(1))
            #expect(throws: TransactionError.negativeDuration(.seconds(-3), what: "setAnimationDuration")) {
                try LayerTransaction.setAnimationDuration(.seconds(-3))
            }
            #expect(LayerTransaction.animationDuration == .seconds(1))
            #expect(throws: TransactionError.negativeDuration(.seconds(-1), what: "animationDuration")) {
                try LayerTransaction.setValue(Duration.seconds(-1), forKey: LayerTransaction.Key.animationDuration)
            }
            #expect(throws: TransactionError.invalidValue(key: "animationDuration", expected: "Duration", got: "Double")) {
                try LayerTransaction.setValue(0.5, forKey: LayerTransaction.Key.animationDuration)
            }
            #expect(LayerTransaction.animationDuration == .seconds(1))
            LayerTransaction.setCompletionBlock { h.log("A:\($0)") }
            #expect(throws: TransactionError.negativeDuration(.milliseconds(-1), what: "addAnimation(duration:)")) {
                try LayerTransaction.addAnimation(duration: .milliseconds(-1))
            }
            LayerTransaction.flush()
            #expect(h.log.take() == ["C", "A:committedWithoutAnimations"])   // no animation was recorded
        }
        #expect(throws: TransactionError.negativeDuration(.nanoseconds(-1), what: "setTooLateBudget")) {
            try h.pipeline.setTooLateBudget(.nanoseconds(-1))
        }
        #expect(h.pipeline.tooLateBudget == CommitPipeline.defaultTooLateBudget)
        let clock = ManualTransactionClock()
        #expect(throws: TransactionError.self) { try clock.advance(by: .seconds(-1)) }
        #expect(clock.now == .zero)
        let scheduler = ClockCompletionScheduler(clock: clock)
        var ran = 0
        scheduler.schedule(after: .seconds(-2)) { ran += 1 }   // a negative delay is due at once
        #expect(scheduler.runDue() == 1 && ran == 1)
    }

    @Test func flushDuringACommitIsReportedNotNested() {
        let h = Harness()
        h.run {
            let v = h.layer("v", layout: { _ in
                LayerTransaction.flush()                      // re-entrant: ignored with a diagnostic
                h.log("after inner flush")
            })
            let w = h.layer("w")
            v.setNeedsLayout()
            let d = h.layer("d", display: { _, _ in w.setNeedsLayout(); LayerTransaction.flush() })
            d.setNeedsDisplay()
            LayerTransaction.flush()
            #expect(h.log.take() == ["L(v)", "after inner flush", "D(d)", "C"])
            #expect(h.diagnostics.map(\.id) == [.commitReentrantCommit])
            #expect(h.diagnostics.first?.item == h.pipeline.threadName)
            #expect(h.diagnostics.first?.message.contains("commit (flush)") == true)
            LayerTransaction.flush()
            #expect(h.log.take() == ["L(w)", "C"])
        }
    }

    @Test func removingUnknownHookOrInvalidFrameLogInput() async {
        let h = Harness()
        h.pipeline.removeHook(CommitPipeline.HookToken(id: 999))   // unknown: no effect, no crash
        await #expect(processExitsWith: .failure) { _ = FrameLog(capacity: 0) }
        await #expect(processExitsWith: .failure) { _ = CommitPipeline(maxLayoutRounds: 0) }
    }
}
