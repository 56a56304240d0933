import RunLoopKit

/// A source0 that is signalled again in every perform keeps each pass "handled", so every pass
/// polls and BeforeWaiting never comes (L-a: a polling pass sends neither BeforeWaiting nor
/// AfterWaiting): the loop-level pool is never popped and
/// grows by K objects per pass. Per-callout pools (modern CF) keep it flat.
enum AutoreleaseBusySourceScenario {
    /// Objects autoreleased per pass.
    static let objectsPerPass = 100
    /// Passes before the source stops the loop.
    static let passes = 50

    static let scenario = Scenario(
        name: "autorelease-busy-source",
        summary: "a source0 re-signalled every pass: no BeforeWaiting, the pool grows to 5001 entries; per-callout pools keep it at 101"
    ) { options in
        let runner = options.runner
        let observers = measure(pools: .runLoopObservers, runner: runner)
        let perCallout = ScenarioThread.run(name: "busy-percallout") { measure(pools: .perCallout, runner: runner) }
        let k = objectsPerPass, m = passes

        // Entry; then per pass only BeforeTimers, BeforeSources and the source0 (the handled
        // source0 makes the pass poll: no BeforeWaiting, no sleep, no AfterWaiting); Exit after
        // stop(). The produced trace is folded the same way: identical consecutive passes become
        // one "N × …" line, so a BeforeWaiting anywhere would show up as a line of its own.
        let expected = [
            "kCFRunLoopEntry",
            "\(m) × kCFRunLoopBeforeTimers, kCFRunLoopBeforeSources, busyWork",
            "kCFRunLoopExit",
        ]

        let grown = observers.value.endOfPass
        let flat = perCallout.value.endOfPass
        let flatMax = flat.max() ?? -1
        var outcome = ScenarioOutcome(
            expected: expected,
            produced: observers.value.activities,
            checks: [
                ScenarioCheck("the source ran \(m) passes in both runs",
                              grown.count == m && flat.count == m, "\(grown.count) and \(flat.count) passes"),
                ScenarioCheck("loop-level pool: after pass p, 1 boundary + p × \(k) objects are pending (never popped)",
                              grown == (1...m).map { 1 + $0 * k },
                              "after pass 1: \(grown.first ?? -1), after pass \(m): \(grown.last ?? -1)"),
                ScenarioCheck("the Exit pop released them all", observers.value.pendingAfterExit == 0,
                              "\(observers.value.pendingAfterExit) entries pending after Exit"),
                ScenarioCheck("per-callout pools: at most the callout's boundary + \(k) objects (≤ K + 2)",
                              flatMax >= k && flatMax <= k + 2, "peak \(flatMax) entries"),
                ScenarioCheck("per-callout run: the same activities, BeforeWaiting never comes",
                              perCallout.value.activities == expected,
                              perCallout.value.activities.joined(separator: " / ")),
                observers.releaseCheck("the pool-observer run's loop"),
                perCallout.releaseCheck("the per-callout run's loop"),
            ])
        outcome.timelineHidesObservers = true
        outcome.artifacts = [ScenarioArtifact(fileName: "autorelease-busy-source-memory.svg", contents: SeriesChart.svg(
            title: "autorelease-busy-source: pool entries at the end of each pass (no BeforeWaiting comes)",
            xLabel: "pass", yLabel: "pending pool entries",
            series: [
                ("pools at Entry / BeforeWaiting (never popped)", grown.enumerated().map { (Double($0.offset + 1), Double($0.element)) }),
                ("a pool per callout", flat.enumerated().map { (Double($0.offset + 1), Double($0.element)) }),
            ]))]
        return outcome.result(name: "autorelease-busy-source", entries: observers.entries, inputs: observers.inputs)
    }

    struct Measurement: Sendable {
        var activities: [String] = []
        /// Pending pool entries at the end of each perform (inside the callout).
        var endOfPass: [Int] = []
        var pendingAfterExit = -1
    }

    /// Activities and source0 callouts, one group per pass (a group starts at Entry,
    /// BeforeTimers and Exit), identical consecutive groups folded into "N × group".
    static func foldedPasses(_ entries: [TraceEntry]) -> [String] {
        var groups: [[String]] = []
        for entry in entries {
            let line: String
            switch entry.kind {
            case .activity(let activity): line = activity.cfName
            case .calloutBegin(.source0): line = entry.label
            default: continue
            }
            if groups.isEmpty || [.entry, .beforeTimers, .exit].contains(where: { entry.kind == .activity($0) }) {
                groups.append([line])
            } else {
                groups[groups.count - 1].append(line)
            }
        }
        var folded: [(group: [String], count: Int)] = []
        for group in groups {
            if let last = folded.last, last.group == group {
                folded[folded.count - 1].count += 1
            } else {
                folded.append((group, 1))
            }
        }
        return folded.map { item in
            (item.count > 1 ? "\(item.count) × " : "") + item.group.joined(separator: ", ")
        }
    }

    static func measure(pools: StandardObservers.PoolScheme, runner: LoopRunner) -> AppSession<Measurement> {
        AppHarness.session(runner: runner, pools: pools) { app in
            let loop = app.loop, recorder = app.recorder
            let probe = MemoryProbe(clock: app.clock, recorder: recorder, readsProcess: false)
            let box = BusyBox()
            let k = objectsPerPass, m = passes
            let busy = LoopSource(label: "busyWork", onOwnerThreadOf: loop) {
                for _ in 0..<k { AutoreleasePool.autorelease(Payload()) }
                box.endOfPass.append(probe.sample(label: "end of pass").pool.pendingEntries)
                if box.endOfPass.count < m {
                    box.source?.signal()            // more work: the next pass is busy too
                } else {
                    loop.stop()
                }
            }
            box.source = busy
            let afterExit = LoopObserver(activities: .exit, order: Int.max - 1, label: "probe: after Exit pop", onOwnerThreadOf: loop) { _, _ in
                box.afterExit = probe.sample(label: "after Exit pop").pool.pendingEntries
            }
            loop.add(busy, mode: .common)
            loop.add(afterExit, mode: .common)
            busy.signal()
            app.runLoop(mode: .default, timeout: 1)
            busy.invalidate()
            afterExit.invalidate()
            box.source = nil
            return Measurement(activities: foldedPasses(recorder.entries),
                               endOfPass: box.endOfPass, pendingAfterExit: box.afterExit)
        }
    }
}

/// The busy source's state, on the loop's thread.
private final class BusyBox {
    var source: LoopSource?
    var endOfPass: [Int] = []
    var afterExit = -1
}
