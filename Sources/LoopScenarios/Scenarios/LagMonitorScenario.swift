import RunLoopKit

/// A lag monitor as in WeChat Matrix measures each turn from wake-up to BeforeWaiting: 10 ms
/// turns pass unnoticed; a 200 ms source0 callout is reported once, with its label.
enum LagMonitorScenario {
    static let scenario = Scenario(
        name: "lag-monitor",
        summary: "threshold 100 ms: five 10 ms turns are not reported, a 200 ms slowImageDecode callout is reported once"
    ) { options in
        AppHarness.run(name: "lag-monitor", runner: options.runner) { app in
            let loop = app.loop, clock = app.clock, recorder = app.recorder
            let monitor = try! LagMonitor(threshold: .milliseconds(100), recorder: recorder)  // a valid threshold cannot throw
            // On the virtual clock a check at every callout end is a watchdog with perfect
            // resolution, and no thread sleeps.
            monitor.checksAtCalloutEnd = true
            monitor.install(on: loop, interceptCallouts: false)
            loop.addCalloutInterceptor(monitor)

            var ticks = 0
            // Valid intervals: `try!` cannot fail.
            let tick = try! LoopTimer(after: 0.050, clock: clock, interval: 0.050, label: "tick", loop.ownerThreadCallout { timer in
                ticks += 1
                recorder.log("tick \(ticks): 10 ms of work")
                clock.advance(seconds: 0.010)
                if ticks == 5 { timer.invalidate() }
            })
            let decode = LoopSource(label: "slowImageDecode", onOwnerThreadOf: loop) {
                recorder.log("slowImageDecode: 200 ms of work")
                clock.advance(seconds: 0.200)
            }
            let arrival = try! LoopTimer(after: 0.300, clock: clock, label: "imageArrived", loop.ownerThreadCallout { _ in
                recorder.log("image data arrived")
                decode.signal()
            })
            loop.add(tick, mode: .common)
            loop.add(decode, mode: .common)
            loop.add(arrival, mode: .common)
            app.runLoop(mode: .default, timeout: 0.6)
            decode.invalidate()
            monitor.uninstall()
            loop.removeCalloutInterceptor(monitor)

            let produced = recorder.entries.compactMap { entry -> String? in
                switch entry.kind {
                case .log: return entry.label
                case .lag(let report):
                    return "lag report: \(report.calloutLabel ?? "-") awake \(Int(DurationText.milliseconds(report.span))) ms"
                default: return nil
                }
            }
            var expected = (1...5).map { "tick \($0): 10 ms of work" }
            expected += [
                "image data arrived",
                "slowImageDecode: 200 ms of work",
                // Awake since the AfterWaiting at 300 ms; checked when the callout ends at 500 ms.
                "lag report: slowImageDecode awake 200 ms",
            ]
            let reports = monitor.reports
            var outcome = ScenarioOutcome(
                expected: expected,
                produced: produced,
                checks: [
                    ScenarioCheck("exactly one report", reports.count == 1, "\(reports.count) reports"),
                    ScenarioCheck("it names the source0 callout slowImageDecode",
                                  reports.first?.calloutLabel == "slowImageDecode" && reports.first?.calloutKind == .source0,
                                  "\(reports.first?.calloutLabel ?? "-") (\(reports.first.map { "\($0.calloutKind.map { "\($0)" } ?? "-")" } ?? "-"))"),
                    ScenarioCheck("its span is ≥ 200 ms", (reports.first?.span ?? .zero) >= .milliseconds(200),
                                  "\(DurationText.milliseconds(reports.first?.span ?? .zero)) ms"),
                    ScenarioCheck("the 10 ms turns completed unreported", ticks == 5 && monitor.completedTurns >= 6,
                                  "\(ticks) ticks, \(monitor.completedTurns) turns completed"),
                ])
            outcome.timelineHidesObservers = true
            return outcome
        }
    }
}
