import RunLoopKit

/// What a replay of a scenario applies, read from its recorded trace: the inputs other threads
/// gave the loop, each at the entry after which the loop observed it, and the clock readings
/// of the recording, which the replay's virtual clock returns in the same order.
///
/// ```swift
/// let plan = ScenarioReplayPlan(clockStart: .zero, loopEventTimes: times, recorderReadTimes: [],
///                               injections: [.init(afterEntries: 4, action: .perform(label: "reply"), time: .zero)])
/// let again = ScenarioCatalog.named("wait-for-callback")!.replay(plan)
/// ```
package struct ScenarioReplayPlan: Sendable {
    /// One input to apply: after the loop event that makes the recorder hold `afterEntries`
    /// entries (a `sleep` or `run-begin`), recorded with the reading `time`.
    package struct Injection: Sendable, Equatable {
        package let afterEntries: Int
        package let action: ScenarioExternalInput.Action
        package let time: LoopInstant

        package init(afterEntries: Int, action: ScenarioExternalInput.Action, time: LoopInstant) {
            self.afterEntries = afterEntries
            self.action = action
            self.time = time
        }
    }

    /// Where the replay's virtual clock starts.
    package var clockStart: LoopInstant
    /// The readings of the loop's own events (runs, activities, callouts, waits), in order: the
    /// virtual clock is moved to each before the loop reads it.
    package var loopEventTimes: [LoopInstant]
    /// The readings the scenario's recorder took for its own entries (logs, marks), in order.
    package var recorderReadTimes: [LoopInstant]
    /// The readings of the inputs the loop's own thread made (e.g. the wake-up of `stop()`),
    /// in order: the loop reads a virtual clock no replay can stop between two events.
    package var loopInputTimes: [LoopInstant]
    /// The inputs from other threads, in the order they were recorded.
    package var injections: [Injection]

    package init(clockStart: LoopInstant, loopEventTimes: [LoopInstant], recorderReadTimes: [LoopInstant],
                loopInputTimes: [LoopInstant] = [], injections: [Injection]) {
        self.clockStart = clockStart
        self.loopEventTimes = loopEventTimes
        self.recorderReadTimes = recorderReadTimes
        self.loopInputTimes = loopInputTimes
        self.injections = injections
    }
}
