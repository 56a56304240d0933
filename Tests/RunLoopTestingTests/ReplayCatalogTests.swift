import LoopScenarios
import RunLoopCore
import RunLoopTesting
import Testing

/// CI's replay gate: every scenario of the main job that runs on the virtual clock, and 1,000
/// random operation scripts of the differential suite, are recorded, written, read back and
/// replayed, and the two traces must be identical.
@Suite("Replay: scenarios and random scripts replay identically")
struct ReplayCatalogTests {
    /// Scenarios that do not run on the virtual clock, so their traces carry real times. Their
    /// inputs are recorded (see `realClockScenariosRecordInputs`), but their cross-thread work
    /// arrives as blocks (`performAndWake`, `perform` + `wakeUp`), which are not inputs a replay
    /// can re-apply: only the wake-up is reported, not the block's closure.
    static let excludedScenarios: [String: String] = [
        "wait-for-callback": "runs on MonotonicClock and waits for a block a network thread enqueues: real times, and the block is not a re-appliable input",
        "resident-thread": "runs Loop.current of a background thread (MonotonicClock) that other threads perform blocks on: real times, and where the blocks land depends on thread timing",
    ]

    @Test("Every virtual-clock scenario of the main job replays to an identical trace",
          arguments: ScenarioCatalog.all.filter { $0.unavailableReason == nil }.map(\.name)
            .filter { excludedScenarios[$0] == nil })
    func scenarioReplays(_ name: String) throws {
        let scenario = try #require(ScenarioCatalog.named(name))
        let first = scenario.run()
        #expect(!first.entries.isEmpty, "\(name) recorded no entries")
        let recorded = try ReplayTrace(parsing: ReplayTrace(events: first.entries, inputs: first.inputs, clockStart: .zero).text)
        #expect(recorded.entries.contains { if case .calloutBegin = $0.kind { true } else { false } })
        let inputLines = recorded.entries.filter { if case .input = $0.kind { true } else { false } }.count
        #expect(inputLines == first.inputs.count, "\(name): \(first.inputs.count) inputs reported, \(inputLines) in the trace")

        let second = scenario.run()
        let replayed = ReplayTrace(events: second.entries, inputs: second.inputs, clockStart: .zero)
        let divergence = ReplayDivergence.first(expected: recorded, actual: replayed)
        #expect(divergence == nil, "\(name): \(divergence.map(\.description) ?? "")")
    }

    @Test("The real-clock scenarios record their cross-thread wake-ups as external inputs, and their traces read back unchanged",
          arguments: excludedScenarios.keys.sorted())
    func realClockScenariosRecordInputs(_ name: String) throws {
        let result = try #require(ScenarioCatalog.named(name)).run()
        let trace = ReplayTrace(events: result.entries, inputs: result.inputs, clockStart: .zero)
        let external = trace.entries.filter { if case .input(let input) = $0.kind { input.origin == .external } else { false } }
        #expect(!external.isEmpty, "\(name): no input from another thread in the trace")
        #expect(try ReplayTrace(parsing: trace.text).text == trace.text)
    }

    @Test("The exclusions name scenarios that exist")
    func exclusionsExist() {
        for name in Self.excludedScenarios.keys {
            #expect(ScenarioCatalog.named(name) != nil, "excluded scenario \(name) is not in the catalog")
        }
    }

    static let scriptCount = 1_000

    @Test("1,000 random operation scripts replay to identical traces")
    func randomScriptsReplay() throws {
        var withInputs = 0
        var failures: [String] = []
        for seed in 0..<UInt64(Self.scriptCount) {
            let script = ScriptGenerator.make(seed: seed)
            let trace = try TraceReplay.record(clockStart: CoreLoopDriver.scriptStart, Self.workload(script))
            if trace.entries.contains(where: { if case .input = $0.kind { true } else { false } }) { withInputs += 1 }
            let outcome = try TraceReplay.replay(try ReplayTrace(parsing: trace.text), workload: Self.workload(script))
            if !outcome.matches { failures.append("seed \(seed): \(outcome)\n\(script)") }
            if failures.count >= 3 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
        // Most scripts signal a source: the traces must hold those inputs.
        #expect(withInputs > Self.scriptCount / 2, "only \(withInputs) of \(Self.scriptCount) traces hold an input")
    }

    /// Runs `script` through the differential suite's interpreter on the recorder's loop, its
    /// signals and wake-ups going through the recorder.
    static func workload(_ script: Script) -> (ReplayRecorder) throws -> Void {
        { recorder in
            let interpreter = ScriptInterpreter(script: script)
            let driver = try CoreLoopDriver(script: script, interpreter: interpreter, on: (recorder.loop, recorder.clock))
            driver.signalSource = { recorder.signal($0) }
            driver.wakeLoop = { _ in recorder.wakeUp() }
            interpreter.driver = driver
            interpreter.runScript()
            interpreter.driver = nil
        }
    }
}
