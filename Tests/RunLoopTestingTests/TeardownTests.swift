import RunLoopTesting
import Testing

/// `finish()` and `assertClean()`: what a test leaves behind is named, once, in one failure.
@Suite struct TeardownTests {
    @Test func aTestThatCleansUpReportsNothing() {
        let collected = CollectingLoopTestReporter()
        weak var released: Loop?
        do {
            LoopTestHarness.run(reporter: collected) { harness in
                released = harness.loop
                let source = harness.addSource("s") {}
                harness.signal(source)
                harness.runUntilIdle()
            }
        }
        #expect(collected.failures.isEmpty)
        #expect(released == nil, "the harness and its loop are released after finish (no retain cycle)")
    }

    @Test func everythingLeftBehindIsNamed() throws {
        let collected = CollectingLoopTestReporter()
        let harness = LoopTestHarness(reporter: collected)
        let findings = try harness.withCurrentPipeline { () throws -> [String] in
            // Added to the loop directly, not through the harness: the test's to remove.
            harness.loop.add(LoopSource(label: "stray") {}, mode: .common)
            harness.loop.add(LoopObserver(activities: .beforeWaiting, order: 5, label: "watcher") { _, _ in }, mode: .default)
            harness.loop.add(try LoopTimer(after: .milliseconds(250), clock: harness.clock, interval: .milliseconds(100),
                                           label: "tick") { _ in }, mode: .default)
            // The harness's own inputs, still holding work.
            harness.addSource("owned") {}.signal()
            harness.send([1], to: try harness.addPort("events") { _ in })
            harness.perform("never") {}
            // A pool pushed and not popped, and transactions left open.
            let token = AutoreleasePool.push()
            _ = AutoreleasePool.autorelease(Payload())
            Layer(name: "w").setNeedsLayout()
            LayerTransaction.begin()
            Layer(name: "v").setNeedsLayout()
            harness.pipeline.addPostCommitCallback {}
            let findings = harness.finish()
            AutoreleasePool.pop(token)
            return findings
        }
        let expected = [
            "observer 'watcher' (order 5) is still in kCFRunLoopDefaultMode",
            "source0 'stray' is still in kCFRunLoopDefaultMode",
            "timer 'tick' (next fire at 250 ms, repeating every 0.1 seconds) is still in kCFRunLoopDefaultMode",
            "block 'never' for kCFRunLoopDefaultMode never ran",
            "source0 'owned' is signalled and was never performed",
            "port 'events' holds 1 undelivered message(s)",
            "2 autorelease pool entries are pending on this thread (a push without its pop, or objects autoreleased outside any pool)",
            "1 explicit transaction was begun and never committed (TX8)",
            "marks on 2 layer(s) were never committed: no BeforeWaiting came after them (TX6)",
            "1 post-commit callback(s) wait for a commit that never came (TX15)",
        ]
        #expect(findings == expected)
        #expect(collected.messages == ["The test left 10 things behind:\n" + expected.map { "  - " + $0 }.joined(separator: "\n")])
        #expect(harness.finish().isEmpty, "a second finish does nothing")
        #expect(collected.messages.count == 1)
    }

    @Test func theHarnessRefusesToRunAfterFinish() {
        let collected = CollectingLoopTestReporter()
        let harness = LoopTestHarness(reporter: collected)
        harness.finish()
        #expect(harness.runTurn() == .finished)
        #expect(collected.messages == ["runTurn() after finish(): the harness's loop is torn down"])
    }

    @Test func assertCleanChecksInTheMiddleOfATest() {
        let collected = CollectingLoopTestReporter()
        LoopTestHarness.run(reporter: collected) { harness in
            let stray = LoopSource(label: "stray") {}
            harness.loop.add(stray, mode: .default)
            #expect(harness.assertClean() == ["source0 'stray' is still in kCFRunLoopDefaultMode"])
            stray.invalidate()
            #expect(harness.assertClean().isEmpty)
        }
        #expect(collected.messages.count == 1)
    }
}

/// Something to autorelease.
private final class Payload {}
