import RunLoopKit

/// An input another thread gave a scenario's loop: a block it enqueued, under the stable label
/// the scenario gave it, or a wake-up. Recorded live; applied again, at the same point, by a
/// replay (`Scenario.replay(_:options:)`).
///
/// ```swift
/// for input in result.externalInputs { print(input.after, input.action) }
/// ```
public struct ScenarioExternalInput: Sendable, Equatable {
    /// What the other thread did.
    public enum Action: Sendable, Equatable {
        /// Enqueued the block the scenario registered under `label` (`ScenarioBlockRegistry`).
        case perform(label: String)
        /// Called `wakeUp()` (`performAndWake` does after enqueueing).
        case wakeUp
    }

    /// The number of entries the scenario's recorder held when it was made: its position.
    public let after: Int
    public let action: Action
    /// The loop clock's reading when it was made.
    public let time: LoopInstant

    public init(after: Int, action: Action, time: LoopInstant) {
        self.after = after
        self.action = action
        self.time = time
    }
}
