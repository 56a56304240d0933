import RunLoopKit

/// Seed 002's image-loading observation: images that finish downloading while the user scrolls
/// are set with `performSelector:…inModes:@[NSDefaultRunLoopMode]`, so none appears during the
/// scroll (the loop runs the tracking mode, blocks for the default mode wait) and all of them
/// appear at once, in order, in the first default-mode pass after the scroll ends.
enum PerformInDefaultModeScenario {
    static let downloads = 10

    static let scenario = Scenario(
        name: "perform-in-default-mode",
        summary: "blocks queued for the default mode during a 100 ms tracking run all run, in order, in one pass after it"
    ) { options in
        AppHarness.run(name: "perform-in-default-mode", runner: options.runner) { app in
            let loop = app.loop, clock = app.clock, recorder = app.recorder
            let imagesSet = Tally()
            let downloadModes = Tally()
            var imagesSetDuringTracking = -1
            let count = downloads
            loop.addCommonMode(.tracking)          // as UIKit does on the main loop

            app.onEvent {
                // A touch starts a scroll: UIKit runs the tracking mode inside the event callout.
                recorder.log("scroll begins")
                let views = LoopBound(imagesSet, loop: loop)
                var finished = 0
                // "Image downloads" finishing every 10 ms, in the common modes (they run while
                // tracking). A valid interval: `try!` cannot fail.
                let network = try! LoopTimer(after: 0.005, clock: clock, interval: 0.010, label: "downloadFinished", loop.ownerThreadCallout { timer in
                    finished += 1
                    let image = finished
                    downloadModes.add(loop.currentMode?.name ?? "-")
                    recorder.log("image \(image) downloaded")
                    loop.perform(inMode: .default, label: "setImage") {
                        views.value.add("image \(image)")
                        recorder.log("setImage image \(image)")
                    }
                    loop.wakeUp()
                    if finished == count { timer.invalidate() }
                })
                loop.add(network, mode: .common)
                app.runLoop(mode: .tracking, timeout: 0.100)
                imagesSetDuringTracking = imagesSet.count
                recorder.log("scroll ends")
            }
            app.sendTouch()
            app.runLoop(mode: .default, timeout: 0.3)

            var expected = ["scroll begins"]
            expected += (1...count).map { "image \($0) downloaded" }
            expected.append("scroll ends")
            expected += (1...count).map { "setImage image \($0)" }
            let entries = recorder.entries
            let produced = entries.filter { $0.kind == .log && !$0.label.hasPrefix("run ") }.map(\.label)

            // All setImage blocks in one pass: same pass number and nothing else between the
            // first and the last (no activity, no other callout than the blocks).
            let setImageLogs = entries.filter { $0.kind == .log && $0.label.hasPrefix("setImage") }
            let first = entries.firstIndex { $0.kind == .log && $0.label.hasPrefix("setImage") } ?? 0
            let last = entries.lastIndex { $0.kind == .log && $0.label.hasPrefix("setImage") } ?? 0
            let between = entries[first...last].filter { entry in
                switch entry.kind {
                case .log: return false
                case .calloutBegin(.block), .calloutEnd(.block): return entry.label != "setImage"
                default: return true
                }
            }
            var outcome = ScenarioOutcome(
                expected: expected,
                produced: produced,
                checks: [
                    ScenarioCheck("every download finished during tracking (common-modes timer)",
                                  downloadModes.items == Array(repeating: Loop.Mode.tracking.name, count: count),
                                  "modes: \(Set(downloadModes.items).sorted())"),
                    ScenarioCheck("0 images set during tracking", imagesSetDuringTracking == 0,
                                  "\(imagesSetDuringTracking) set"),
                    ScenarioCheck("all \(count) set after it, in FIFO order",
                                  imagesSet.items == (1...count).map { "image \($0)" }, imagesSet.items.joined(separator: ", ")),
                    ScenarioCheck("in one pass (same pass number, nothing else in between)",
                                  setImageLogs.count == count && Set(setImageLogs.map(\.pass)).count == 1 && between.isEmpty,
                                  "passes \(Set(setImageLogs.map(\.pass)).sorted()), \(between.count) other entries in between"),
                ])
            outcome.timelineHidesObservers = true
            return outcome
        }
    }
}
