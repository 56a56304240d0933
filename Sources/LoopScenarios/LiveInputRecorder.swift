import PThreads
import RunLoopKit

/// A live scenario's event sink: passes every event to the scenario's recorder, except the
/// wake-ups other threads make, which it keeps as `ScenarioExternalInput`s beside the blocks
/// those threads enqueue (`ScenarioInputs.performAndWake`), in the order they were made.
final class LiveInputRecorder: LoopEventSink {
    private let recorder: TraceRecorder
    private let external: Locked<[ScenarioExternalInput]>

    init(recorder: TraceRecorder, external: Locked<[ScenarioExternalInput]>) {
        self.recorder = recorder
        self.external = external
    }

    /// The entries the recorder holds: the position of an input made now.
    var recordedCount: Int { recorder.count }

    func loop(_ loop: Loop, emitted event: LoopEvent) {
        if case .input(.wakeUp, fromOwnerThread: false) = event.kind {
            let position = recordedCount
            external.withLock { $0.append(ScenarioExternalInput(after: position, action: .wakeUp, time: event.time)) }
            return
        }
        recorder.record(event)
    }
}
