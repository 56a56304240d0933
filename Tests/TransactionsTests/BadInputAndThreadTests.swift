import Testing
import PThreads
@testable import Transactions

@Suite("TransactionBadInputAndThreads")
struct BadInputAndThreadTests {
    @Test func commitWithoutBeginThrowsAClearError() {
        let h = Harness()
        h.run {
            do throws(TransactionError) {
                try Transaction.commit()
                Issue.record("commit() without begin() did not throw")
            } catch {
                #expect(error == .commitWithoutBegin(thread: h.pipeline.threadName, implicitOpen: false))
                #expect(error.description.contains("no explicit transaction open"))
                #expect(error.description.contains(h.pipeline.threadName))
            }
            // Only the implicit transaction open: still an error, with a hint, and nothing committed.
            h.layer("v").setNeedsLayout()
            #expect(throws: TransactionError.commitWithoutBegin(thread: h.pipeline.threadName, implicitOpen: true)) {
                try Transaction.commit()
            }
            #expect((try? Transaction.commit()) == nil)
            let message = TransactionError.commitWithoutBegin(thread: "t", implicitOpen: true).description
            #expect(message.contains("Transaction.flush()"))
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
                Transaction.flush()
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
        let warnings = SharedBox<[String]>([])
        let counter = DeinitCounter()
        let completionCalls = SharedBox(0)
        let pipelineRef = WeakBox(), layerRef = WeakBox()
        runOnNewPThread {
            let pipeline = CommitPipeline.current
            pipelineRef.object = pipeline
            pipeline.diagnosticsHandler = { diagnostic in warnings.update { $0.append(diagnostic.message) } }
            let root = Layer(name: "root")
            let child = Layer(name: "child")
            root.addSublayer(child)
            layerRef.object = child
            let canary = Canary(counter)
            root.onLayout = { _ in _ = canary }            // the layer (queued) keeps the canary alive
            child.setNeedsDisplay()
            root.setNeedsLayout()
            let blockCanary = Canary(counter)
            Transaction.setCompletionBlock { _ in _ = blockCanary; completionCalls.update { $0 += 1 } }
            pipeline.addPostCommitCallback { _ = Canary(counter) }
            pipeline.addAfterCommitHook { [pipeline] _ in _ = pipeline }   // a cycle the exit must break
            // The thread ends here with the implicit transaction still open.
        }
        #expect(warnings.value.count == 1)
        let text = warnings.value.first ?? ""
        #expect(text.hasPrefix("Transactions: warning, deleted thread with uncommitted Transaction"))
        #expect(text.contains("thread 0x"))
        #expect(counter.value == 2)                  // both canaries released: layers and block freed
        #expect(completionCalls.value == 0)          // never committed, so never completed
        #expect(pipelineRef.object == nil)           // the thread's pipeline itself was freed
        #expect(layerRef.object == nil)              // and the dirty layers it held
    }

    @Test func threadExitWithNothingOpenIsSilent() {
        let warnings = SharedBox<[String]>([])
        runOnNewPThread {
            let pipeline = CommitPipeline.current
            pipeline.diagnosticsHandler = { diagnostic in warnings.update { $0.append(diagnostic.message) } }
            Layer(name: "v").setNeedsLayout()
            Transaction.flush()
        }
        #expect(warnings.value.isEmpty)
    }

    @Test func threadExitWithOpenExplicitTransactionNamesIt() {
        let warnings = SharedBox<[TransactionDiagnostic]>([])
        runOnNewPThread {
            CommitPipeline.current.diagnosticsHandler = { diagnostic in warnings.update { $0.append(diagnostic) } }
            Transaction.begin()
            Transaction.begin()
        }
        guard case let .threadExitedWithUncommittedTransaction(_, depth)? = warnings.value.first else {
            Issue.record("no thread-exit diagnostic: \(warnings.value)")
            return
        }
        #expect(depth == 2)
        #expect(warnings.value.first?.message.contains("2 explicit Transaction.begin() without commit") == true)
    }

    @Test func invalidDurationsCountAsZero() {
        let h = Harness()
        h.run {
            Transaction.animationDuration = .nan
            #expect(Transaction.animationDuration == 0)
            Transaction.animationDuration = -3
            #expect(Transaction.animationDuration == 0)
            Transaction.setCompletionBlock { h.log("A:\($0)") }
            Transaction.addAnimation(duration: -1)
            Transaction.flush()
            #expect(h.log.take() == ["C"])
            h.pipeline.runDueCompletions()
            #expect(h.log.take() == ["A:animationsFinished"])
        }
        let scheduler = ClockCompletionScheduler(clock: ManualTransactionClock())
        var ran = 0
        scheduler.schedule(after: .nan) { ran += 1 }
        #expect(scheduler.runDue() == 1 && ran == 1)
    }

    @Test func flushDuringACommitIsReportedNotNested() {
        let h = Harness()
        h.run {
            let v = h.layer("v", layout: { _ in
                Transaction.flush()                      // re-entrant: ignored with a diagnostic
                h.log("after inner flush")
            })
            let w = h.layer("w")
            v.setNeedsLayout()
            let d = h.layer("d", display: { _, _ in w.setNeedsLayout(); Transaction.flush() })
            d.setNeedsDisplay()
            Transaction.flush()
            #expect(h.log.take() == ["L(v)", "after inner flush", "D(d)", "C"])
            #expect(h.diagnostics == [.reentrantCommitIgnored(reason: .flush)])
            Transaction.flush()
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
