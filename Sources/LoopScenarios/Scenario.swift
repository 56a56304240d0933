import RunLoopKit

/// One documented behaviour, reproduced on RunLoopKit and compared with what the documentation
/// says must happen.
///
/// A scenario builds its own loop on a fresh thread, runs it, and returns a `ScenarioResult`
/// holding the expected trace (written by hand from the documentation), the produced trace
/// (the same kind of lines, taken from the run), extra checks and the files to export.
///
/// ```swift
/// let scenario = ScenarioCatalog.named("seed-code1-source0")!
/// let result = scenario.run(ScenarioOptions())
/// print(result.passed ? "✓ \(result.name)" : ScenarioReport.failureText(result))
/// ```
package struct Scenario: Sendable {
    /// The name used on the command line and in the test suite (`seed-code1-source0` …).
    package let name: String
    /// One line saying what the scenario shows.
    package let summary: String
    /// Why the scenario cannot run in this build (nil when it can): the main job and the test
    /// suites skip it and say why.
    package let unavailableReason: String?
    private let body: @Sendable (ScenarioOptions, ScenarioInputs) -> ScenarioResult
    /// True when the scenario takes its clock and cross-thread inputs from `ScenarioInputs`,
    /// so that ``replay(_:replacing:options:)`` can run it again from a recorded trace.
    package let replaysCrossThreadInputs: Bool

    package init(name: String, summary: String, unavailableReason: String? = nil,
                run body: @escaping @Sendable (ScenarioOptions) -> ScenarioResult) {
        self.name = name
        self.summary = summary
        self.unavailableReason = unavailableReason
        self.body = { options, _ in body(options) }
        replaysCrossThreadInputs = false
    }

    /// A scenario whose other threads' work goes through `ScenarioInputs`.
    init(name: String, summary: String, replayable body: @escaping @Sendable (ScenarioOptions, ScenarioInputs) -> ScenarioResult) {
        self.name = name
        self.summary = summary
        unavailableReason = nil
        self.body = body
        replaysCrossThreadInputs = true
    }

    /// Runs the scenario on a fresh thread (joined before returning), so per-thread state
    /// (autorelease pool, commit pipeline, `Loop.current`) starts clean and scenarios may run
    /// in parallel.
    package func run(_ options: ScenarioOptions = ScenarioOptions()) -> ScenarioResult {
        let body = self.body
        return ScenarioThread.run(name: name) { body(options, ScenarioInputs()) }
    }

    /// Runs the scenario again from a recording: on a `VirtualClock` that returns the recorded
    /// readings, without starting its other threads, applying each recorded input of those
    /// threads after the loop event it was observed at. `replacements` stand in for the blocks
    /// the scenario registers under those labels. The result's `replayProblems` lists inputs
    /// that could not be applied. Returns nil for a scenario that does not replay
    /// (``replaysCrossThreadInputs`` is false: it runs on a virtual clock and on one thread, so
    /// ``run(_:)`` repeats it).
    ///
    /// ```swift
    /// let again = scenario.replay(plan)
    /// print(again?.replayProblems ?? [])   // []
    /// ```
    package func replay(_ plan: ScenarioReplayPlan, replacing replacements: [String: @Sendable () -> Void] = [:],
                       options: ScenarioOptions = ScenarioOptions()) -> ScenarioResult? {
        guard replaysCrossThreadInputs else { return nil }
        let body = self.body
        return ScenarioThread.run(name: name) { body(options, ScenarioInputs(replaying: plan, replacing: replacements)) }
    }
}

/// How a scenario may measure the process around it, and how it runs its loops.
///
/// ```swift
/// let result = scenario.run(ScenarioOptions(processIsQuiet: true))   // the main job
/// ```
package struct ScenarioOptions: Sendable {
    /// True when nothing else in the process opens or closes descriptors meanwhile (the main
    /// job runs scenarios one at a time). Only then do scenarios compare `/proc/self/fd` before
    /// and after; in a parallel test run other tests' descriptors would make that check flaky.
    package var processIsQuiet: Bool
    /// What runs each of the scenario's loop runs: `Loop.run` itself unless a test puts another
    /// event loop in its place (the GLib hosting test).
    package var runner: LoopRunner

    package init(processIsQuiet: Bool = false, runner: LoopRunner = .native) {
        self.processIsQuiet = processIsQuiet
        self.runner = runner
    }
}

/// An extra assertion of a scenario: a count, a peak, an order.
///
/// ```swift
/// ScenarioCheck("exactly one report", reports.count == 1, "\(reports.count) reports")
/// ```
package struct ScenarioCheck: Sendable, Equatable {
    package let name: String
    package let passed: Bool
    /// What was measured (shown for failed and passed checks alike).
    package let detail: String

    package init(_ name: String, _ passed: Bool, _ detail: String = "") {
        self.name = name
        self.passed = passed
        self.detail = detail
    }
}

/// A file a scenario exports (text log, Chrome trace JSON, SVG chart).
///
/// ```swift
/// ScenarioArtifact(fileName: "lag-monitor.json", contents: ChromeTraceExporter.json(recorder.entries))
/// ```
package struct ScenarioArtifact: Sendable, Equatable {
    /// File name only, e.g. `seed-code1-source0.json`.
    package let fileName: String
    package let contents: String

    package init(fileName: String, contents: String) {
        self.fileName = fileName
        self.contents = contents
    }
}

/// The outcome of one scenario run.
///
/// ```swift
/// let result = ScenarioCatalog.named("lag-monitor")!.run()
/// if !result.passed { print(ScenarioReport.failureDetails(result).joined(separator: "\n")) }
/// ```
package struct ScenarioResult: Sendable {
    package let name: String
    /// The compared trace as the documentation gives it (written by hand, never by our code).
    package let expected: [String]
    /// The same kind of lines as the run produced them.
    package let produced: [String]
    package let checks: [ScenarioCheck]
    /// The verbose trace of the run (`runloopkit NAME` prints it).
    package let fullTrace: String
    package let artifacts: [ScenarioArtifact]
    /// Every entry the scenario's trace recorder kept (what `runloopkit record` writes out).
    package let entries: [TraceEntry]
    /// The inputs (signals, sends, wake-ups) that recorder saw, placed among `entries`. For a
    /// scenario that ``Scenario/replaysCrossThreadInputs``, only those of the loop's own thread.
    package let inputs: [TraceInput]
    /// The inputs other threads gave the loop (blocks by label, wake-ups), for a scenario that
    /// ``Scenario/replaysCrossThreadInputs``; in a replay, those the replay applied.
    package let externalInputs: [ScenarioExternalInput]
    /// What a replay could not apply (empty for a recording and for a faithful replay).
    package let replayProblems: [String]

    package init(name: String, expected: [String], produced: [String], checks: [ScenarioCheck] = [],
                fullTrace: String = "", artifacts: [ScenarioArtifact] = [], entries: [TraceEntry] = [],
                inputs: [TraceInput] = [], externalInputs: [ScenarioExternalInput] = [], replayProblems: [String] = []) {
        self.name = name
        self.expected = expected
        self.produced = produced
        self.checks = checks
        self.fullTrace = fullTrace
        self.artifacts = artifacts
        self.entries = entries
        self.inputs = inputs
        self.externalInputs = externalInputs
        self.replayProblems = replayProblems
    }

    /// True when the produced trace equals the expected one line for line.
    package var traceMatches: Bool { expected == produced }

    /// The checks that failed.
    package var failedChecks: [ScenarioCheck] { checks.filter { !$0.passed } }

    /// The trace matches and every check passed.
    package var passed: Bool { traceMatches && failedChecks.isEmpty }
}

extension ScenarioResult {
    /// Writes every artifact into `directory` (created when missing).
    /// Returns the number of files written and a message per file that could not be written.
    ///
    /// ```swift
    /// let (written, errors) = result.writeArtifacts(to: "runloopkit-out")
    /// ```
    package func writeArtifacts(to directory: String) -> (written: Int, errors: [String]) {
        var written = 0
        var errors: [String] = []
        for artifact in artifacts {
            do {
                try OutputFile.write(artifact.contents, to: "\(directory)/\(artifact.fileName)")
                written += 1
            } catch {
                errors.append(error.description)
            }
        }
        return (written, errors)
    }
}
