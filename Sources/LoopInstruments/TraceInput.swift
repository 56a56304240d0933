import RunLoopCore

/// An input a ``TraceRecorder`` saw: a signal, send or wake-up the loop reported
/// (`LoopEvent.Kind.input`), and where it fell among the recorder's entries.
///
/// ```swift
/// for input in recorder.inputs { print(input.after, input.event.kind) }
/// ```
public struct TraceInput: Sendable {
    /// The number of entries recorded before it (dropped ones included): its position.
    public let after: Int
    /// The input event as the loop reported it, on the thread that made the input.
    public let event: LoopEvent

    public init(after: Int, event: LoopEvent) {
        self.after = after
        self.event = event
    }
}
