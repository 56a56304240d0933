import RunLoopKit

/// Objects autoreleased during a turn live until the loop is about to sleep: the pool observer
/// at 2147483647 pops them at BeforeWaiting, so pool memory rises during each turn and falls
/// to nothing before each sleep — a sawtooth. A pool per item keeps the peak within one page.
enum AutoreleaseSawtoothScenario {
    /// Objects autoreleased per timer fire.
    static let objectsPerTurn = 2_000
    /// Timer fires (turns) per run.
    static let turns = 10
    /// objc4's page: 4096 bytes minus a 56-byte header = 505 eight-byte slots.
    static let slotsPerPage = 505

    static let scenario = Scenario(
        name: "autorelease-sawtooth",
        summary: "a 16 ms timer autoreleases 2000 objects per turn: the pool peaks at 2001 entries and is emptied at every BeforeWaiting"
    ) { options in
        let runner = options.runner
        let flat = measure(perItemPool: false, runner: runner)
        let nested = ScenarioThread.run(name: "sawtooth-nested") { measure(perItemPool: true, runner: runner) }
        let n = objectsPerTurn
        // objc4: the pool pushed at Entry (and again after each BeforeWaiting pop) is one
        // POOL_BOUNDARY slot; each autorelease of a distinct object is one more slot (coalescing
        // only merges repeats of the same object). So a turn peaks at 1 + N slots, on
        // ceil((1 + N) / 505) pages; the pop frees every child page because the token's page
        // is less than half full, and the push that follows leaves the boundary alone.
        let peakPages = (1 + n + slotsPerPage - 1) / slotsPerPage
        let expected = (1...turns).map { turn in
            "turn \(turn): peak \(1 + n) entries on \(peakPages) pages; after the BeforeWaiting pop 1 entry on 1 page"
        }
        let produced = flat.value.turns.enumerated().map { index, turn in
            "turn \(index + 1): peak \(turn.peakEntries) entries on \(turn.peakPages) pages; "
                + "after the BeforeWaiting pop \(turn.entriesAfterPop) \(turn.entriesAfterPop == 1 ? "entry" : "entries") "
                + "on \(turn.pagesAfterPop) \(turn.pagesAfterPop == 1 ? "page" : "pages")"
        }
        let nestedPeak = nested.value.turns.map(\.peakEntries).max() ?? -1
        let nestedPages = nested.value.turns.map(\.peakPages).max() ?? -1
        var outcome = ScenarioOutcome(
            expected: expected,
            produced: produced,
            checks: [
                ScenarioCheck("the timer fired \(turns) times, once per turn", flat.value.fires == turns
                                  && flat.value.turns.count == turns,
                              "\(flat.value.fires) fires, \(flat.value.turns.count) turns with a fire"),
                ScenarioCheck("every turn peaks at exactly 1 boundary + \(n) objects",
                              flat.value.turns.allSatisfy { $0.peakEntries == 1 + n },
                              "peaks \(Set(flat.value.turns.map(\.peakEntries)).sorted())"),
                ScenarioCheck("right after every BeforeWaiting pop only the new pool's boundary is pending",
                              flat.value.turns.allSatisfy { $0.entriesAfterPop == 1 },
                              "after pop \(Set(flat.value.turns.map(\.entriesAfterPop)).sorted())"),
                ScenarioCheck("a pool per item: the peak stays within one page (≤ \(slotsPerPage) entries, ≤ 1 page)",
                              nested.value.fires == turns && nestedPeak >= 0 && nestedPeak <= slotsPerPage && nestedPages <= 1,
                              "peak \(nestedPeak) entries on \(nestedPages) page(s) over \(nested.value.fires) turns"),
                flat.releaseCheck("the flat run's loop"),
                nested.releaseCheck("the pool-per-item run's loop"),
            ])
        outcome.artifacts = [
            ScenarioArtifact(fileName: "autorelease-sawtooth-memory.svg", contents: MemoryChart.svg(
                flat.entries, metrics: [.poolPendingEntries, .poolPeakEntries],
                title: "autorelease-sawtooth: \(n) objects per 16 ms turn, popped at BeforeWaiting")),
            ScenarioArtifact(fileName: "autorelease-sawtooth-nested-memory.svg", contents: MemoryChart.svg(
                nested.entries, metrics: [.poolPendingEntries, .poolPeakEntries],
                title: "autorelease-sawtooth with a pool per item: each turn peaks at \(nestedPeak) entries")),
        ]
        return outcome.result(name: "autorelease-sawtooth", entries: flat.entries, inputs: flat.inputs)
    }

    struct Turn: Sendable {
        var peakEntries: Int
        var peakPages: Int
        var entriesAfterPop = -1
        var pagesAfterPop = -1
    }

    struct Measurement: Sendable {
        var fires = 0
        var turns: [Turn] = []
    }

    /// One run of the app: a 16 ms repeating timer in the common modes autoreleases N objects
    /// per fire, for `turns` fires. Samples: at AfterWaiting (turn start, peaks reset), just
    /// before the pool pop (order 2147483646) and just after it (order above 2147483647).
    static func measure(perItemPool: Bool, runner: LoopRunner) -> AppSession<Measurement> {
        AppHarness.session(runner: runner) { app in
            let loop = app.loop, clock = app.clock
            let state = MeasurementBox()
            let probe = MemoryProbe(clock: clock, recorder: app.recorder)
            let turnStart = LoopObserver(activities: .afterWaiting, order: 0, label: "probe: turn start") { _, _ in
                AutoreleasePool.resetPeaks()
                probe.sample(label: "turn start", activity: .afterWaiting)
            }
            let beforePop = LoopObserver(activities: .beforeWaiting, order: 2_147_483_646, label: "probe: before pool pop", onOwnerThreadOf: loop) { _, _ in
                let sample = probe.sample(label: "before pool pop", activity: .beforeWaiting)
                if state.firedThisTurn {
                    state.value.turns.append(Turn(peakEntries: sample.pool.peakEntries, peakPages: sample.pool.pages))
                }
            }
            let afterPop = LoopObserver(activities: .beforeWaiting, order: Int.max - 1, label: "probe: after pool pop", onOwnerThreadOf: loop) { _, _ in
                let sample = probe.sample(label: "after pool pop", activity: .beforeWaiting)
                if state.firedThisTurn, !state.value.turns.isEmpty {
                    state.value.turns[state.value.turns.count - 1].entriesAfterPop = sample.pool.pendingEntries
                    state.value.turns[state.value.turns.count - 1].pagesAfterPop = sample.pool.pages
                }
                state.firedThisTurn = false
            }
            for observer in [turnStart, beforePop, afterPop] { loop.add(observer, mode: .common) }

            let n = objectsPerTurn, turns = self.turns
            // 16 ms is a valid interval; `try!` cannot fail here.
            let timer = try! LoopTimer(after: 0.016, clock: clock, interval: 0.016, label: "frameTimer", loop.ownerThreadCallout { timer in
                for _ in 0..<n {
                    if perItemPool {
                        withAutoreleasePool { _ = AutoreleasePool.autorelease(Payload()) }
                    } else {
                        AutoreleasePool.autorelease(Payload())
                    }
                }
                state.value.fires += 1
                state.firedThisTurn = true
                if state.value.fires == turns { timer.invalidate() }
            })
            loop.add(timer, mode: .common)
            app.runLoop(mode: .default, timeout: 0.016 * Double(turns) + 0.04)
            for observer in [turnStart, beforePop, afterPop] { observer.invalidate() }
            timer.invalidate()
            return state.value
        }
    }
}

/// The scenario's measurements, filled in by observers on the loop's thread.
private final class MeasurementBox {
    var value = AutoreleaseSawtoothScenario.Measurement()
    var firedThisTurn = false
}

/// What the scenarios autorelease: a small heap object, each one distinct.
final class Payload {
    var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
}
