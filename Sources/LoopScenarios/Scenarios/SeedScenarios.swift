import RunLoopKit

// The three logs of seed 000_848c3fb9429876f3 ("reloadData then dispatch_get_main_queue
// sometimes works, sometimes not"), reproduced on the app harness. The expected lines are
// copied from the seed text; only the activity names are CF's (the seed prints them the same).

enum SeedScenarios {
    /// Code 1 from a source0: the main-queue block overtakes the table's layout.
    static let code1Source0 = Scenario(
        name: "seed-code1-source0",
        summary: "reloadData + dispatch_async(main) in a source0: the block runs before cellForRowAtIndexPath"
    ) { options in
        AppHarness.run(name: "seed-code1-source0", runner: options.runner) { app in
            let loop = app.loop, recorder = app.recorder
            app.onEvent {
                app.reloadData()
                recorder.log("reloadData")
                loop.submit(label: "mainQueueBlock") { recorder.log("dispatch_get_main_queue") }
            }
            app.sendTouch()
            let result = app.runLoop(mode: .default, timeout: 0.1)
            // Port wake → AW → source1 signals the event source0 → next pass BT BS source0
            // (reloadData marks, the block is queued) → handled, so the queue's fast path
            // (didDispatchPortLastTime is false) skips BW → the block → next pass BT BS, the fast
            // path may not run twice → BW → commit at 2000000 → layout.
            let expected = [
                "kCFRunLoopAfterWaiting",
                "kCFRunLoopBeforeTimers",
                "kCFRunLoopBeforeSources",
                "reloadData",
                "dispatch_get_main_queue",
                "kCFRunLoopBeforeTimers",
                "kCFRunLoopBeforeSources",
                "kCFRunLoopBeforeWaiting",
                "cellForRowAtIndexPath",
            ]
            let frames = app.frames.frames
            return ScenarioOutcome(
                expected: expected,
                produced: recorder.lines(.seed),
                checks: [
                    ScenarioCheck("exactly one commit, made by the BeforeWaiting observer",
                                  frames.map(\.reason) == [.beforeWaiting], "commits: \(frames.map(\.reason))"),
                    ScenarioCheck("the run ended by its timeout", result == .timedOut, "run returned \(result)"),
                ])
        }
    }

    /// Code 1 from a button: UIKit flushes the transaction when the event handling ran too long.
    static let code1Button = Scenario(
        name: "seed-code1-button",
        summary: "the same from a 20 ms button handler: flush-if-too-late lays out before the block runs"
    ) { options in
        AppHarness.run(name: "seed-code1-button", runner: options.runner) { app in
            let loop = app.loop, recorder = app.recorder, clock = app.clock
            app.onEvent {
                app.reloadData()
                recorder.log("reloadData")
                loop.submit(label: "mainQueueBlock") { recorder.log("dispatch_get_main_queue") }
                // The rest of the button's event handling: 20 ms, longer than one 60 Hz frame,
                // so the source0 callout ends with _UIApplicationFlushRunLoopCATransactionIfTooLate.
                clock.advance(seconds: 0.020)
            }
            app.sendTouch()
            app.runLoop(mode: .default, timeout: 0.1)
            let expected = [
                "kCFRunLoopAfterWaiting",
                "kCFRunLoopBeforeTimers",
                "kCFRunLoopBeforeSources",
                "reloadData",
                "cellForRowAtIndexPath",
                "dispatch_get_main_queue",
                "kCFRunLoopBeforeTimers",
                "kCFRunLoopBeforeSources",
                "kCFRunLoopBeforeWaiting",
            ]
            let frames = app.frames.frames
            return ScenarioOutcome(
                expected: expected,
                produced: recorder.lines(.seed),
                checks: [
                    ScenarioCheck("exactly one commit, forced at the end of the source0 callout (tooLate)",
                                  frames.map(\.reason) == [.tooLate], "commits: \(frames.map(\.reason))"),
                    ScenarioCheck("the BeforeWaiting commit had nothing left to do",
                                  app.pipeline.frameNumber == 1, "frames: \(app.pipeline.frameNumber)"),
                ])
        }
    }

    /// Code 2: the nested main-queue block runs after the next sleep, so after the layout.
    static let code2NestedBlocks = Scenario(
        name: "seed-code2-nested-blocks",
        summary: "block1 reloads and queues block2: block2 runs after the sleep, after cellForRowAtIndexPath"
    ) { options in
        AppHarness.run(name: "seed-code2-nested-blocks", runner: options.runner) { app in
            let loop = app.loop, recorder = app.recorder
            let table = LoopBound(app.tableView, loop: loop)
            app.onEvent {
                loop.submit(label: "block1") {
                    recorder.log("dispatch_get_main_queue_1")
                    table.value.setNeedsLayout()               // [self.tableView reloadData]
                    recorder.log("reloadData")
                    loop.submit(label: "block2") {
                        recorder.log("dispatch_get_main_queue_2")
                    }
                }
            }
            app.sendTouch()
            app.runLoop(mode: .default, timeout: 0.1)
            // Source0 queues block1 → fast path → block1 (didDispatchPortLastTime = true) → next
            // pass may not take the fast path → BW → commit → sleep; block2's port wakes the loop
            // at once → AW → block2 → next pass BT BS, fast path blocked again → BW.
            let expected = [
                "kCFRunLoopAfterWaiting",
                "kCFRunLoopBeforeTimers",
                "kCFRunLoopBeforeSources",
                "dispatch_get_main_queue_1",
                "reloadData",
                "kCFRunLoopBeforeTimers",
                "kCFRunLoopBeforeSources",
                "kCFRunLoopBeforeWaiting",
                "cellForRowAtIndexPath",
                "kCFRunLoopAfterWaiting",
                "dispatch_get_main_queue_2",
                "kCFRunLoopBeforeTimers",
                "kCFRunLoopBeforeSources",
                "kCFRunLoopBeforeWaiting",
            ]
            let produced = recorder.lines(TextLogFilter.seed.window(from: .activity(.afterWaiting), to: .sleep(occurrence: 2)))
            let cell = produced.firstIndex(of: "cellForRowAtIndexPath")
            let block2 = produced.firstIndex(of: "dispatch_get_main_queue_2")
            return ScenarioOutcome(
                expected: expected,
                produced: produced,
                checks: [
                    ScenarioCheck("block2 runs after cellForRowAtIndexPath (the list is laid out when it runs)",
                                  cell != nil && block2 != nil && cell! < block2!,
                                  "cellForRowAtIndexPath at line \(cell.map { $0 + 1 } ?? 0), block2 at line \(block2.map { $0 + 1 } ?? 0)"),
                    ScenarioCheck("one commit, at BeforeWaiting",
                                  app.frames.frames.map(\.reason) == [.beforeWaiting],
                                  "commits: \(app.frames.frames.map(\.reason))"),
                ])
        }
    }
}
