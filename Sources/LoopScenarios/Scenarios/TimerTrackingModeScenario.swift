import RunLoopKit

/// A timer scheduled in the default mode stops while the loop runs the tracking mode (a
/// scroll); a timer in the common modes keeps firing. When the default mode runs again, the
/// default timer fires once for all the ticks it missed, then continues on its original grid
/// (T5: a late repeating timer fires once and its missed ticks are dropped; T10: a timer cannot
/// fire, or wake the loop, in a mode it is not in).
enum TimerTrackingModeScenario {
    static let scenario = Scenario(
        name: "timer-tracking-mode",
        summary: "10 ms timers: the default-mode one pauses during tracking and catches up once; the common-modes one never stops"
    ) { options in
        AppHarness.run(name: "timer-tracking-mode", runner: options.runner) { app in
            let loop = app.loop, clock = app.clock
            loop.addCommonMode(.tracking)
            let firesA = Tally(), firesB = Tally()
            let ms: (LoopInstant) -> String = { String($0.nanoseconds / 1_000_000) }
            // 10 ms grids starting at 10 ms; valid intervals, `try!` cannot fail.
            let timerA = try! LoopTimer(fireAt: LoopInstant(nanoseconds: 10_000_000), interval: 0.010, label: "timerA (default mode)", loop.ownerThreadCallout { _ in
                firesA.add(ms(clock.now))
            })
            let timerB = try! LoopTimer(fireAt: LoopInstant(nanoseconds: 10_000_000), interval: 0.010, label: "timerB (common modes)", loop.ownerThreadCallout { _ in
                firesB.add(ms(clock.now))
            })
            loop.add(timerA, mode: .default)
            loop.add(timerB, mode: .common)

            var produced: [String] = []
            func phase(_ title: String, _ mode: Loop.Mode, _ seconds: Double) {
                let a = firesA.count, b = firesB.count
                app.recorder.log("run \(mode.name) for \(Int(seconds * 1000)) ms")
                app.runLoop(mode: mode, timeout: seconds)
                let newA = firesA.items[a...], newB = firesB.items[b...]
                produced.append("\(title): A ×\(newA.count) at [\(newA.joined(separator: " "))] ms, "
                                + "B ×\(newB.count) at [\(newB.joined(separator: " "))] ms")
            }
            phase("default 0→55 ms", .default, 0.055)
            phase("tracking 55→155 ms", .tracking, 0.100)
            phase("default 155→205 ms", .default, 0.050)
            timerA.invalidate()
            timerB.invalidate()

            let expected = [
                "default 0→55 ms: A ×5 at [10 20 30 40 50] ms, B ×5 at [10 20 30 40 50] ms",
                "tracking 55→155 ms: A ×0 at [] ms, B ×10 at [60 70 80 90 100 110 120 130 140 150] ms",
                // A was due at 60 ms: one coalesced fire when the default mode waits again, then
                // the original grid (60 + k·10 > 155 → 160).
                "default 155→205 ms: A ×6 at [155 160 170 180 190 200] ms, B ×5 at [160 170 180 190 200] ms",
            ]
            var outcome = ScenarioOutcome(
                expected: expected,
                produced: produced,
                checks: [
                    ScenarioCheck("totals: A 11, B 20", firesA.count == 11 && firesB.count == 20,
                                  "A \(firesA.count), B \(firesB.count)"),
                ])
            outcome.timelineHidesObservers = true
            return outcome
        }
    }
}
