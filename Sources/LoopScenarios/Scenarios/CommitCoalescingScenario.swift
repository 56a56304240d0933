import RunLoopKit

/// Several marks in one turn coalesce into one layout and one display per layer, done at
/// BeforeWaiting by the commit observer (2000000): after the event hook (0) and the
/// before-commit hook (1999000), parents before children, before the after-commit hook
/// (2001000) and the pool pop (2147483647).
enum CommitCoalescingScenario {
    static let scenario = Scenario(
        name: "commit-coalescing",
        summary: "3× setNeedsLayout + 3× setNeedsDisplay in one source0 → one layout and one display per layer at BeforeWaiting"
    ) { options in
        AppHarness.run(name: "commit-coalescing", runner: options.runner) { app in
            let recorder = app.recorder
            let table = app.tableView
            let cell = Layer(name: "cell")
            table.addSublayer(cell)
            for layer in [table, cell] {
                layer.onLayout = { recorder.log("layout \($0.name)") }
                layer.onDisplay = { layer, _ in recorder.log("display \(layer.name)") }
            }
            app.onEvent {
                // The child is marked first: the commit still works top-down.
                cell.setNeedsDisplay()
                cell.setNeedsLayout()
                for _ in 0..<3 {
                    table.setNeedsLayout()
                    table.setNeedsDisplay()
                }
                recorder.log("marked")
            }
            app.sendTouch()
            app.runLoop(mode: .default, timeout: 0.1)

            // Pass 1 sleeps with nothing to commit (BeforeWaiting #1); the touch's source0 runs
            // in pass 3 of the run, and pass 4's BeforeWaiting (#2) commits it.
            let window = TextLogFilter(includesCallouts: true)
                .window(from: .activity(.beforeWaiting, occurrence: 2), to: .sleep())
            let produced = window.apply(to: recorder.entries).compactMap { entry -> String? in
                switch entry.kind {
                case .activity(let activity): return activity.cfName
                case .calloutBegin: return entry.label
                case .log: return entry.label
                default: return nil
                }
            }
            let expected = [
                "kCFRunLoopBeforeWaiting",
                "_UIGestureRecognizerUpdateObserver",
                "_beforeCACommitHandler",
                "CA::Transaction::observer_callback",
                "layout tableView",
                "layout cell",
                "display tableView",
                "display cell",
                "_afterCACommitHandler",
                "_wrapRunLoopWithAutoreleasePoolHandler",
            ]
            let logs = recorder.entries.filter { $0.kind == .log }.map(\.label)
            func count(_ line: String) -> Int { logs.filter { $0 == line }.count }
            let frames = app.frames.frames
            let frame = frames.first
            return ScenarioOutcome(
                expected: expected,
                produced: produced,
                checks: [
                    ScenarioCheck("one layout and one display per layer in the whole run",
                                  ["layout tableView", "layout cell", "display tableView", "display cell"].allSatisfy { count($0) == 1 },
                                  "layout tableView ×\(count("layout tableView")), layout cell ×\(count("layout cell")), "
                                      + "display tableView ×\(count("display tableView")), display cell ×\(count("display cell"))"),
                    ScenarioCheck("the frame log has exactly 1 frame", frames.count == 1, "\(frames.count) frames"),
                    ScenarioCheck("the frame lists both layers, parent first, for layout and display",
                                  frame?.laidOut.map(\.name) == ["tableView", "cell"]
                                      && frame?.displayed.map(\.layer.name) == ["tableView", "cell"],
                                  "laid out \(frame?.laidOut.map(\.name) ?? []), displayed \(frame?.displayed.map(\.layer.name) ?? [])"),
                ])
        }
    }
}
