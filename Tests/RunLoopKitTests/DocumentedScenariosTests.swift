import LoopScenarios
import RunLoopKit
import Testing

/// The documented scenarios of `swift run runloopkit`, one test each: the produced trace must
/// equal the hand-written expected trace line for line and every extra check must pass. On
/// failure the expected-vs-produced diff and the failed checks are printed.
///
/// Each scenario runs on its own thread with its own loop (virtual clock, except the two
/// cross-thread scenarios, which synchronise with semaphores), so the suite can run in parallel
/// with everything else. Process-wide descriptor counts are only checked by the main job.
@Suite struct DocumentedScenarios {
    @Test("seed-code1-source0") func seedCode1Source0() { expectPasses("seed-code1-source0") }
    @Test("seed-code1-button") func seedCode1Button() { expectPasses("seed-code1-button") }
    @Test("seed-code2-nested-blocks") func seedCode2NestedBlocks() { expectPasses("seed-code2-nested-blocks") }
    @Test("commit-coalescing") func commitCoalescing() { expectPasses("commit-coalescing") }
    @Test("autorelease-sawtooth") func autoreleaseSawtooth() { expectPasses("autorelease-sawtooth") }
    @Test("autorelease-busy-source") func autoreleaseBusySource() { expectPasses("autorelease-busy-source") }
    @Test("timer-tracking-mode") func timerTrackingMode() { expectPasses("timer-tracking-mode") }
    @Test("perform-in-default-mode") func performInDefaultMode() { expectPasses("perform-in-default-mode") }
    @Test("resident-thread") func residentThread() { expectPasses("resident-thread") }
    @Test("wait-for-callback") func waitForCallback() { expectPasses("wait-for-callback") }
    @Test("lag-monitor") func lagMonitor() { expectPasses("lag-monitor") }
    /// Needs the interposed allocator, which a sanitizer build compiles out.
    @Test("memory-peak-attribution", .enabled(if: ScenarioCatalog.named("memory-peak-attribution")?.unavailableReason == nil,
                                              "the allocator is not interposed (sanitizer build)"))
    func memoryPeakAttribution() { expectPasses("memory-peak-attribution") }

    /// The main job's list: these names, in this order, and a test above for each.
    @Test func catalogListsTheTwelveScenariosInOrder() {
        #expect(ScenarioCatalog.all.map(\.name) == [
            "seed-code1-source0", "seed-code1-button", "seed-code2-nested-blocks", "commit-coalescing",
            "autorelease-sawtooth", "autorelease-busy-source", "timer-tracking-mode", "perform-in-default-mode",
            "resident-thread", "wait-for-callback", "lag-monitor", "memory-peak-attribution",
        ])
        #expect(ScenarioCatalog.named("no-such-scenario") == nil)
    }

    /// A failing comparison is reported as a readable diff, so a broken scenario is easy to read.
    @Test func diffShowsMissingAndUnexpectedLines() {
        #expect(TraceDiff.lines(expected: ["AW", "reloadData", "dispatch", "BW", "cell"],
                                produced: ["AW", "reloadData", "cell", "dispatch", "BW"])
            == ["  AW", "  reloadData", "+ cell", "  dispatch", "  BW", "- cell"])
    }

    private func expectPasses(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let scenario = ScenarioCatalog.named(name) else {
            Issue.record("no scenario named \(name)", sourceLocation: sourceLocation)
            return
        }
        let result = scenario.run()
        #expect(result.name == name, sourceLocation: sourceLocation)
        #expect(!result.expected.isEmpty, "a scenario must compare something", sourceLocation: sourceLocation)
        #expect(result.passed, "\(name) failed:\n\(ScenarioReport.failureDetails(result).joined(separator: "\n"))",
                sourceLocation: sourceLocation)
        #expect(result.artifacts.contains { $0.fileName == "\(name).json" }, sourceLocation: sourceLocation)
    }
}
