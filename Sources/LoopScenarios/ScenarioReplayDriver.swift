import PThreads
import RunLoopKit

/// A replayed scenario's event sink. It passes the loop's events to the scenario's recorder,
/// moves the virtual clock to the recording's next reading after each one (so the loop reads
/// what the recording read), and after the event a recorded input from another thread was
/// observed at (a `sleep` or `run-begin`), applies that input: it enqueues the block the
/// scenario registered under the input's label, or wakes the loop.
final class ScenarioReplayDriver: LoopEventSink {
    private let plan: ScenarioReplayPlan
    private let recorder: TraceRecorder
    private let clock: VirtualClock
    private let blocks: ScenarioBlockRegistry
    private let applied: Locked<[ScenarioExternalInput]>
    private let state = Locked(State())

    private struct State {
        var loopEvents = 0
        var loopInputs = 0
        var nextInjection = 0
        /// The driver is applying an input: the loop reports it as its own thread's, and the
        /// recording has it as another thread's, so it is recorded from the plan instead.
        var applying = false
        var problems: [String] = []
    }

    init(plan: ScenarioReplayPlan, recorder: TraceRecorder, clock: VirtualClock, blocks: ScenarioBlockRegistry,
         applied: Locked<[ScenarioExternalInput]>) {
        self.plan = plan
        self.recorder = recorder
        self.clock = clock
        self.blocks = blocks
        self.applied = applied
        if let first = plan.loopEventTimes.first { clock.advance(to: first) }
    }

    func loop(_ loop: Loop, emitted event: LoopEvent) {
        if case .input = event.kind {
            // The driver's own inputs are recorded as the plan has them (`applyInjections`).
            guard let time = loopInputReading(otherwise: event.time) else { return }
            recorder.record(LoopEvent(kind: event.kind, label: event.label, mode: event.mode, pass: event.pass, time: time))
            return
        }
        recorder.record(event)
        guard Self.isRecorded(event) else { return }
        let index = state.withLock { state in
            defer { state.loopEvents += 1 }
            return state.loopEvents
        }
        if index + 1 < plan.loopEventTimes.count { clock.advance(to: plan.loopEventTimes[index + 1]) }
        applyInjections(on: loop)
    }

    /// The recorder leaves out its own activity observer's callouts.
    private static func isRecorded(_ event: LoopEvent) -> Bool {
        switch event.kind {
        case .calloutBegin(.observer), .calloutEnd(.observer): return event.label != TraceRecorder.activityObserverLabel
        default: return true
        }
    }

    /// The recorded reading of the loop's next own input (`fallback` past the last one); nil
    /// while the driver applies an input.
    private func loopInputReading(otherwise fallback: LoopInstant) -> LoopInstant? {
        state.withLock { state in
            if state.applying { return nil }
            defer { state.loopInputs += 1 }
            return state.loopInputs < plan.loopInputTimes.count ? plan.loopInputTimes[state.loopInputs] : fallback
        }
    }

    private func applyInjections(on loop: Loop) {
        let position = recorder.count
        while let injection = nextInjection(at: position) {
            state.withLock { $0.applying = true }
            switch injection.action {
            case .perform(let label):
                if let block = blocks.take(label) {
                    if !loop.perform(label: block.calloutLabel, block.work) {
                        problem("the loop refused the block \"\(label)\" (torn down?)")
                    }
                } else {
                    problem("the scenario registered no block \"\(label)\" within 10 s")
                }
            case .wakeUp: loop.wakeUp()
            }
            state.withLock { $0.applying = false }
            applied.withLock { $0.append(ScenarioExternalInput(after: position, action: injection.action, time: injection.time)) }
        }
    }

    private func nextInjection(at position: Int) -> ScenarioReplayPlan.Injection? {
        state.withLock { state in
            guard state.nextInjection < plan.injections.count,
                  plan.injections[state.nextInjection].afterEntries == position else { return nil }
            defer { state.nextInjection += 1 }
            return plan.injections[state.nextInjection]
        }
    }

    private func problem(_ text: String) { state.withLock { $0.problems.append(text) } }

    /// Inputs that could not be applied, and those never reached.
    var problems: [String] {
        state.withLock { state in
            state.problems + plan.injections[state.nextInjection...].map {
                "the input \($0.action) after entry \($0.afterEntries) was never applied: the replay did not reach that point"
            }
        }
    }
}
