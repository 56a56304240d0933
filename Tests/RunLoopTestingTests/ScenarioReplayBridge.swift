import LoopScenarios
import RunLoopTesting

/// Joins the scenarios' record and replay (LoopScenarios) to the trace file (RunLoopTesting):
/// a scenario result becomes a trace, and a parsed trace becomes the plan a replay follows.
extension ReplayTrace {
    /// The trace of a scenario run: its entries, its own thread's inputs, and the blocks and
    /// wake-ups other threads gave its loop (written after the wait they arrived in).
    init(scenario result: ScenarioResult) {
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
struct ScenarioPlanError: Error, CustomStringConvertible {
    let line: Int
    let input: String
    var description: String { "line \(line): a scenario replay cannot apply \(input)" }
}

extension ScenarioReplayPlan {
    /// The plan of `trace`: each input from another thread (`perform`, `wakeup`) at the number
    /// of entries before it; the readings of the loop's events, of the recorder's own entries
    /// and of the loop's own inputs, each in order.
    init(trace: ReplayTrace) throws(ScenarioPlanError) {
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
