import Testing
import RunLoopDiagnostics
import Transactions

/// The examples of Docs/Transactions.md, with `print` replaced by a captured log.
@Suite("TransactionsDocumentationExamples")
struct DocumentationExamplesTests {
    @Test func layersExample() {
        let pipeline = CommitPipeline(clock: ManualTransactionClock())
        var out: [String] = []
        pipeline.asCurrent {
            let root = Layer(name: "root")
            let label = Layer(name: "label", bounds: LayerRect(x: 0, y: 0, width: 200, height: 20))
            root.addSublayer(label)
            label.onLayout = { layer in out.append("layout \(layer.name)") }
            label.onDisplay = { layer, dirty in out.append("draw \(layer.name) in \(dirty)") }
            label.setNeedsLayout()
            label.setNeedsLayout()
            label.setNeedsDisplay(in: LayerRect(x: 0, y: 0, width: 10, height: 20))
            label.setNeedsDisplay(in: LayerRect(x: 50, y: 0, width: 10, height: 20))
            LayerTransaction.flush()
        }
        #expect(out == ["layout label", "draw label in (0.0, 0.0, 60.0, 20.0)"])
    }

    @Test func scopingExample() throws {
        let pipeline = CommitPipeline(clock: ManualTransactionClock())
        try pipeline.asCurrent {
            LayerTransaction.begin()
            try LayerTransaction.setAnimationDuration(.seconds(1))
            LayerTransaction.begin()
            #expect(LayerTransaction.animationDuration == .seconds(1))
            try LayerTransaction.setAnimationDuration(.seconds(2))
            try LayerTransaction.commit()
            #expect(LayerTransaction.animationDuration == .seconds(1))
            try LayerTransaction.commit()
            #expect(LayerTransaction.animationDuration == .milliseconds(250))
            #expect(pipeline.frameNumber == 1)
        }
    }

    @Test func completionSchedulerExample() throws {
        let clock = ManualTransactionClock()
        let pipeline = CommitPipeline(clock: clock)
        var out: [String] = []
        try pipeline.asCurrent {
            LayerTransaction.begin()
            LayerTransaction.setCompletionBlock { reason in out.append("done: \(reason)") }
            try LayerTransaction.addAnimation(duration: .milliseconds(500))
            try LayerTransaction.commit()
            #expect(out.isEmpty)
            #expect((pipeline.completionScheduler as? ClockCompletionScheduler)?.nextDeadline
                    == clock.now.advanced(by: .milliseconds(500)))
            try clock.advance(by: .milliseconds(500))
            pipeline.runDueCompletions()
        }
        #expect(out == ["done: animationsFinished"])
    }

    /// The Diagnostics section: a layout loop is recorded under its stable id, with the layer as
    /// the item. (The layer name is unique to this test: recorders see every test's reports.)
    @Test func diagnosticsExample() {
        let pipeline = CommitPipeline(clock: ManualTransactionClock())
        let recorder = DiagnosticsRecorder(capturing: [.commitLayoutLoop])
        pipeline.asCurrent {
            let layer = Layer(name: "docs-feedback")
            layer.onLayout = { layer in layer.setNeedsLayout() }
            layer.setNeedsLayout()
            LayerTransaction.flush()
        }
        #expect(recorder.diagnostics(withID: .commitLayoutLoop, item: "docs-feedback").count == 1)
        #expect(DiagnosticID.commitLayoutLoop.rawValue == "commit.layout-loop")
        #expect(DiagnosticID.commitThreadExitedUncommitted.rawValue == "commit.thread-exited-uncommitted")
        #expect(DiagnosticID.commitReentrantCommit.rawValue == "commit.reentrant-commit")
    }
}
