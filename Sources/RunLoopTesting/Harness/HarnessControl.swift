import RunLoopKit

/// The harness's own observer, last of all (order `Int.max`) in every mode the harness runs:
/// it ends a turn at the outermost run's BeforeWaiting (a `stop()`, whose wake-up lets the wait
/// return at once instead of letting virtual time pass), and stops a run that makes too many
/// passes without waiting. Nested runs started by callouts are left alone.
final class HarnessControl {
    let observer: LoopObserver
    private let state: State

    /// Confined to the loop's thread (the observer's callouts and the harness run there).
    private final class State {
        var endsTurnAtBeforeWaiting = false
        var passLimit = Int.max
        /// Passes made by each run in progress, outermost first.
        var passesPerRun: [Int] = []
        var overrun: Overrun?
    }

    /// A run the pass guard stopped.
    struct Overrun {
        let passes: Int
        let lastPass: UInt64
    }

    /// The observer for `loop` (held weakly: the loop's modes hold the observer).
    init(loop: Loop, label: String) {
        let state = State()
        self.state = state
        observer = LoopObserver(activities: [.entry, .beforeTimers, .beforeWaiting, .exit], order: Int.max,
                                label: label, onOwnerThreadOf: loop) { [weak loop] _, activity in
            guard let loop else { return }
            Self.observe(activity, of: loop, state: state)
        }
    }

    /// Runs `body` (which runs the loop) with the turn ending at BeforeWaiting or not, and the
    /// pass guard at `passLimit`; returns what `body` returned and the run it had to stop, if any.
    func during<Result>(endingTurnAtBeforeWaiting: Bool, passLimit: Int, _ body: () -> Result) -> (Result, Overrun?) {
        let saved = (state.endsTurnAtBeforeWaiting, state.passLimit)
        state.endsTurnAtBeforeWaiting = endingTurnAtBeforeWaiting
        state.passLimit = passLimit
        state.overrun = nil
        defer { (state.endsTurnAtBeforeWaiting, state.passLimit) = saved }
        let result = body()
        defer { state.overrun = nil }
        return (result, state.overrun)
    }

    private static func observe(_ activity: Loop.Activity, of loop: Loop, state: State) {
        switch activity {
        case .entry:
            state.passesPerRun.append(0)
        case .exit:
            _ = state.passesPerRun.popLast()
        case .beforeTimers:
            guard !state.passesPerRun.isEmpty else { return }
            state.passesPerRun[state.passesPerRun.count - 1] += 1
            let passes = state.passesPerRun[state.passesPerRun.count - 1]
            if passes > state.passLimit && state.overrun == nil {
                state.overrun = Overrun(passes: passes - 1, lastPass: loop.passCount)
                loop.stop()
            }
        case .beforeWaiting:
            if state.endsTurnAtBeforeWaiting && state.passesPerRun.count == 1 { loop.stop() }
        default:
            break
        }
    }
}
