import RunLoopKit

/// An input another thread gave a scenario's loop: a block it enqueued, under the stable label
/// the scenario gave it, or a wake-up. Recorded live; applied again, at the same point, by a
/// replay (`Scenario.replay(_:options:)`).
///
/// ```swift
/// for input in result.externalInputs { print(input.after, input.action) }
/// ```
package struct ScenarioExternalInput: Sendable, Equatable {
    /// What the other thread did.
    package enum Action: Sendable, Equatable {
        /// Enqueued the block the scenario registered under `label` (`ScenarioBlockRegistry`).
        case perform(label: String)
        /// Called `wakeUp()` (`performAndWake` does after enqueueing).
        case wakeUp
    }

    /// The number of entries the scenario's recorder held when it was made: its position.
    package let after: Int
    package let action: Action
    /// The loop clock's reading when it was made.
    package let time: LoopInstant

    package init(after: Int, action: Action, time: LoopInstant) {
        self.after = after
        self.action = action
        self.time = time
    }
}
