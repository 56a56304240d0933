import LoopScenarios
import RunLoopCore
import RunLoopDiagnostics
import RunLoopTesting
import ScenarioReplay
import Testing

/// CI's replay gate: every scenario of the main job, and 1,000 random operation scripts of the
/// differential suite, are recorded, written, read back and replayed, and the two traces must be
/// identical. The scenarios whose other threads give their loop work (`replaysCrossThreadInputs`)
/// are replayed from the file on a virtual clock, their recorded inputs applied by the replay.
@Suite("Replay: scenarios and random scripts replay identically")
struct ReplayCatalogTests {
    static let runnable = ScenarioCatalog.all.filter { $0.unavailableReason == nil }.map(\.name)

    @Test("Every scenario of the main job replays to an identical trace", arguments: runnable)
    func scenarioReplays(_ name: String) throws {
        let scenario = try #require(ScenarioCatalog.named(name))
        let first = scenario.run()
        #expect(!first.entries.isEmpty, "\(name) recorded no entries")
        let recorded = try ReplayTrace(parsing: ReplayTrace(scenario: first).text)
        #expect(recorded.entries.contains { if case .calloutBegin = $0.kind { true } else { false } })
        let inputLines = recorded.entries.filter { if case .input = $0.kind { true } else { false } }.count
        let inputCount = first.inputs.count + first.externalInputs.count
        #expect(inputLines == inputCount, "\(name): \(inputCount) inputs reported, \(inputLines) in the trace")

        if scenario.replaysCrossThreadInputs {
            #expect(first.passed, "\(name) (recording): \(ScenarioReport.failureDetails(first).joined(separator: "\n"))")
            #expect(first.externalInputs.contains { if case .perform = $0.action { true } else { false } },
                    "\(name): no block from another thread was recorded")
        }
        // What `runloopkit replay` does: replayed from the file where other threads gave the
        // loop work, run again otherwise.
        let outcome = try scenario.replay(recorded)
        #expect(outcome.result.replayProblems.isEmpty, "\(name): \(outcome.result.replayProblems)")
        #expect(outcome.result.passed, "\(name) (replay): \(ScenarioReport.failureDetails(outcome.result).joined(separator: "\n"))")
        #expect(outcome.divergence == nil, "\(name): \(outcome.divergence.map(\.description) ?? "")")
    }

    @Test("A replayed block that does something else is caught at the first line that differs")
    func changedBlockDiverges() throws {
        let scenario = try #require(ScenarioCatalog.named("wait-for-callback"))
        let recorded = try ReplayTrace(parsing: ReplayTrace(scenario: scenario.run()).text)
        // The recording's first block from the network thread logs its answer first thing.
        let answer = try #require(recorded.entries.firstIndex { $0.kind == .log("callback: 200 OK on the loop thread") })
        let replayed = try #require(scenario.replay(try ScenarioReplayPlan(trace: recorded), replacing: ["response-a": {}]))
        let divergence = try #require(ReplayDivergence.first(expected: recorded, actual: ReplayTrace(scenario: replayed)))
        #expect(divergence.line == recorded.line(ofEntry: answer), "\(divergence)")
        #expect(divergence.expected?.contains("callback: 200 OK on the loop thread") == true, "\(divergence)")
        #expect(divergence.actual?.hasPrefix("return ") == true, "\(divergence)")
    }

    @Test("A scenario trace whose input a scenario replay cannot apply is refused with its line")
    func unreplayableInputIsRefused() throws {
        let trace = try ReplayTrace(parsing: """
            runloopkit-trace 2
            clock start=0
            run-begin p=0 m="kCFRunLoopDefaultMode" t=0
            signal p=0 m="kCFRunLoopDefaultMode" t=0 from=external label="s0"
            end entries=2
            """)
        #expect(throws: ScenarioPlanError.self) { try ScenarioReplayPlan(trace: trace) }
        do { _ = try ScenarioReplayPlan(trace: trace) } catch { #expect(error.line == 4, "\(error)") }
    }

    static let scriptCount = 1_000

    @Test("1,000 random operation scripts replay to identical traces")
    func randomScriptsReplay() throws {
        var withInputs = 0
        var failures: [String] = []
        // Scripts add invalidated items and run the common pseudo-mode on purpose.
        let recorder = DiagnosticsRecorder(capturing: [.addRefused, .runCommonModes])
        for seed in 0..<UInt64(Self.scriptCount) {
            let script = ScriptGenerator.make(seed: seed)
            let trace = try TraceReplay.record(clockStart: CoreLoopDriver.scriptStart, Self.workload(script))
            if trace.entries.contains(where: { if case .input = $0.kind { true } else { false } }) { withInputs += 1 }
            let outcome = try TraceReplay.replay(try ReplayTrace(parsing: trace.text), workload: Self.workload(script))
            if !outcome.matches { failures.append("seed \(seed): \(outcome)\n\(script)") }
            if failures.count >= 3 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
        let refusals = recorder.stop().filter { $0.id == .addRefused && $0.item?.wholeMatch(of: /[ost][0-9]+/) != nil }
        #expect(refusals.allSatisfy { $0.message.hasSuffix("the item was invalidated") }, "\(refusals)")
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
