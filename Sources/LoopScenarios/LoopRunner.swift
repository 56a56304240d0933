import RunLoopKit

/// How a scenario runs its loop: every `run(mode:timeout:…)` of a scenario goes through one.
/// ``native`` (the default) is `Loop.run` itself; a test can put another event loop in its place
/// — the GLib hosting test runs each of them inside GLib's iteration — and compare the traces.
///
/// The closure is called on the loop's own thread, with the run's arguments as the scenario
/// wrote them (the timeout in seconds, as `Loop.run(mode:timeout:returnAfterSourceHandled:)`
/// reads them); it must run the loop once and return what that run returned.
///
/// ```swift
/// let counted = LoopRunner { loop, mode, seconds, returnAfterSourceHandled in
///     loop.run(mode: mode, timeout: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
/// }
/// let result = ScenarioCatalog.named("seed-code1-source0")!.run(ScenarioOptions(runner: counted))
/// ```
package struct LoopRunner: Sendable {
    private let body: @Sendable (Loop, Loop.Mode, Double, Bool) -> Loop.RunResult

    /// A runner that runs a loop with `body(loop, mode, seconds, returnAfterSourceHandled)`.
    package init(_ body: @escaping @Sendable (_ loop: Loop, _ mode: Loop.Mode, _ seconds: Double,
                                             _ returnAfterSourceHandled: Bool) -> Loop.RunResult) {
        self.body = body
    }

    /// `Loop.run(mode:timeout:returnAfterSourceHandled:)`: the loop waits by itself.
    package static let native = LoopRunner { loop, mode, seconds, returnAfterSourceHandled in
        loop.run(mode: mode, timeout: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
    }

    /// Runs `loop` once in `mode`, as `loop.run(mode:timeout:returnAfterSourceHandled:)` does.
    @discardableResult
    package func run(_ loop: Loop, mode: Loop.Mode, timeout seconds: Double,
                    returnAfterSourceHandled: Bool = false) -> Loop.RunResult {
        body(loop, mode, seconds, returnAfterSourceHandled)
    }
}
