import RunLoopKit

/// An input to a loop that its own code did not produce: what a replay must re-apply.
///
/// ```swift
/// let input = ReplayInput(.signal(label: "s0"), origin: .external)
/// ```
public struct ReplayInput: Sendable, Equatable {
    /// What the input was.
    public enum Action: Sendable, Equatable {
        /// A source0 was signalled (S1: the first signal's stamp orders it).
        case signal(label: String)
        /// A message was sent to a port source; `payload` identifies it (`bytes:` and hex).
        case send(label: String, payload: String)
        /// `wakeUp()` was called (W3: it counts unless the run ignores wake-ups).
        case wakeUp
        /// A file source's descriptor was made ready (`events` as `LoopFileSource.Events` bits).
        case fileReady(label: String, events: UInt32)
        /// The virtual clock was moved forward by this many nanoseconds.
        case advance(nanoseconds: UInt64)
        /// Another thread enqueued a block on the loop (`perform`/`performAndWake`). The loop
        /// sees no closure in a file, so `label` is the stable name the workload gave this
        /// input; a replay asks the workload for the closure registered under it.
        case perform(label: String)
    }

    /// Where an input came from, which decides how a replay re-applies it.
    public enum Origin: String, Sendable, Equatable {
        /// From the loop's thread (a callout or the code between runs): the workload makes it
        /// again when replayed, and the replay checks that it does.
        case loop
        /// From another thread while the loop waited: the replay applies it itself, just
        /// before the wait of the same pass, and the workload must not make it again.
        case external
    }

    public var action: Action
    public var origin: Origin

    public init(_ action: Action, origin: Origin) {
        self.action = action
        self.origin = origin
    }

    /// The input a loop reported (`LoopEvent.Kind.input`); nil for any other event. A send of
    /// a value (not bytes) gets the payload `value`, which a replay cannot rebuild.
    public init?(reported event: LoopEvent) {
        guard case .input(let input, let fromOwnerThread) = event.kind else { return nil }
        let origin: Origin = fromOwnerThread ? .loop : .external
        switch input {
        case .signal: self.init(.signal(label: event.label), origin: origin)
        case .send(let bytes): self.init(.send(label: event.label, payload: bytes.map(ReplayRecorder.payload) ?? "value"), origin: origin)
        case .wakeUp: self.init(.wakeUp, origin: origin)
        }
    }
}
