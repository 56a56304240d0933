package import LoopScenarios
package import RunLoopTesting

// Joins the scenarios' record and replay (LoopScenarios) to the trace file (RunLoopTesting):
// a scenario result becomes a trace, and a parsed trace becomes the plan a replay follows. Used
// by `runloopkit record` / `runloopkit replay` and by CI's replay gate.

extension ReplayTrace {
    /// The trace of a scenario run: its entries, its own thread's inputs, and the blocks and
    /// wake-ups other threads gave its loop (written after the wait they arrived in).
    package init(scenario result: ScenarioResult) {
        let external = result.externalInputs.map { input in
            (after: input.after, input: ReplayInput(input.action.traceAction, origin: .external), time: input.time)
        }
        self.init(events: result.entries, inputs: result.inputs, external: external, clockStart: .zero)
    }
}

extension ScenarioExternalInput.Action {
    var traceAction: ReplayInput.Action {
        switch self {
        case .perform(let label): .perform(label: label)
        case .wakeUp: .wakeUp
        }
    }
}

/// A trace holds an input a scenario replay cannot apply.
package struct ScenarioPlanError: Error, CustomStringConvertible {
    /// The trace file's line of the input.
    package let line: Int
    /// The input's trace line.
    package let input: String
    package var description: String { "line \(line): a scenario replay cannot apply \(input)" }
}

extension ScenarioReplayPlan {
    /// The plan of `trace`: each input from another thread (`perform`, `wakeup`) at the number
    /// of entries before it; the readings of the loop's events, of the recorder's own entries
    /// and of the loop's own inputs, each in order.
    package init(trace: ReplayTrace) throws(ScenarioPlanError) {
        var loopEventTimes: [LoopInstant] = []
        var recorderReadTimes: [LoopInstant] = []
        var loopInputTimes: [LoopInstant] = []
        var injections: [Injection] = []
        var entriesBefore = 0
        for (index, entry) in trace.entries.enumerated() {
            switch entry.kind {
            case .input(let input) where input.origin == .loop:
                loopInputTimes.append(entry.time)
            case .input(let input):
                let action: ScenarioExternalInput.Action
                switch input.action {
                case .perform(let label): action = .perform(label: label)
                case .wakeUp: action = .wakeUp
                default: throw ScenarioPlanError(line: trace.line(ofEntry: index), input: entry.line)
                }
                injections.append(Injection(afterEntries: entriesBefore, action: action, time: entry.time))
            case .runBegin, .runEnd, .activity, .calloutBegin, .calloutEnd, .sleep, .wake:
                loopEventTimes.append(entry.time)
                entriesBefore += 1
            case .log, .mark, .commit, .pool, .lag:
                recorderReadTimes.append(entry.time)
                entriesBefore += 1
            }
        }
        self.init(clockStart: trace.clockStart, loopEventTimes: loopEventTimes, recorderReadTimes: recorderReadTimes,
                  loopInputTimes: loopInputTimes, injections: injections)
    }
}

/// A scenario run again from its recorded trace, and where it departed from the recording.
package struct ScenarioReplayOutcome: Sendable {
    /// The replayed run.
    package let result: ScenarioResult
    /// The first entry where the replay differs from the recording; nil when they are identical.
    package let divergence: ReplayDivergence?
}

extension Scenario {
    /// Runs the scenario again the way `recorded` was recorded and compares the two traces.
    /// A scenario whose other threads give its loop work is replayed from the trace on a
    /// virtual clock, their recorded blocks and wake-ups applied where they arrived; any other
    /// scenario runs on its virtual clock and one thread, so running it again repeats it.
    ///
    /// ```swift
    /// let recorded = try ReplayTrace(contentsOfFile: "seed.rlktrace")
    /// let outcome = try scenario.replay(recorded)
    /// print(outcome.divergence.map(\.description) ?? "identical")
    /// ```
    package func replay(_ recorded: ReplayTrace) throws(ScenarioPlanError) -> ScenarioReplayOutcome {
        let plan = try ScenarioReplayPlan(trace: recorded)
        let again = replay(plan) ?? run()
        return ScenarioReplayOutcome(result: again,
                                     divergence: ReplayDivergence.first(expected: recorded, actual: ReplayTrace(scenario: again)))
    }
}
