import RunLoopKit

/// The "app" most scenarios run: a loop wired like an iOS main run loop, on a virtual clock.
///
/// - `Loop(clock: VirtualClock())`, a commit pipeline on the same clock (current for the whole
///   run), `StandardObservers` in the common modes (pool push at −2147483647, event hook at 0,
///   before-commit 1999000, commit 2000000, after-commit 2001000, pool pop/push 2147483647);
/// - a `TraceRecorder` as the loop's event sink, with an observer for every activity so each one
///   appears in the trace, and every commit recorded (then kept in `frames`);
/// - a table view layer whose layout logs `cellForRowAtIndexPath`; `reloadData()` marks it;
/// - UIKit's event path: a port source (source1, like the HID event port) whose handler signals
///   the `__handleEventQueue` source0, whose perform runs the app's event handler.
///   `sendTouch()` before `run` is the "source1 wake-up" of the seed logs;
/// - `runLoop(mode:timeout:)`: the loop's runs, through the scenario's `LoopRunner`.
///
/// ```swift
/// let result = AppHarness.run(name: "demo", runner: .native) { app in
///     app.onEvent { app.reloadData() }
///     app.sendTouch()
///     app.runLoop(mode: .default, timeout: 0.1)
///     return ScenarioOutcome(expected: [], produced: [])
/// }
/// ```
final class AppHarness {
    let clock: VirtualClock
    let loop: Loop
    let pipeline: CommitPipeline
    let recorder: TraceRecorder
    /// Every commit's snapshot, in order (fed through the recorder's commit sink).
    let frames = FrameLog()
    let standard: StandardObservers
    /// The layer `reloadData()` marks; its layout logs `cellForRowAtIndexPath`.
    let tableView: Layer
    /// Source1: the port the "system" posts touches to.
    let eventPort: LoopPortSource
    /// Source0: UIKit's event queue, signalled by the port's handler.
    let eventQueue: LoopSource
    /// What runs the loop (`Loop.run` unless the scenario's options say otherwise).
    let runner: LoopRunner
    private let handler = EventHandlerSlot()
    private let activityObserver: LoopObserver

    private init(clock: VirtualClock, loop: Loop, pipeline: CommitPipeline, pools: StandardObservers.PoolScheme, runner: LoopRunner) {
        self.clock = clock
        self.loop = loop
        self.pipeline = pipeline
        self.runner = runner
        recorder = TraceRecorder(clock: clock)
        recorder.attach(to: loop)
        activityObserver = recorder.observeActivities(on: loop)
        pipeline.sink = TraceCommitSink(recorder: recorder, forwardingTo: frames)
        standard = StandardObservers(installedOn: loop, pipeline: pipeline, pools: pools)

        let recorder = self.recorder
        tableView = Layer(name: "tableView")
        tableView.onLayout = { _ in recorder.log("cellForRowAtIndexPath") }

        let handler = self.handler
        let eventQueue = LoopSource(label: "__handleEventQueue", onOwnerThreadOf: loop) { handler.run() }
        self.eventQueue = eventQueue
        eventPort = scenarioPort(label: "__IOHIDEventSystemClientQueueCallback") { _ in eventQueue.signal() }
        loop.add(eventQueue, mode: .common)
        loop.add(eventPort, mode: .common)
    }

    /// Builds the app on the calling thread, runs `body`, tears the app down and returns the
    /// scenario's result: the outcome plus the verbose trace, the standard artifacts (`NAME.log`,
    /// `NAME.json`, `NAME-turns.svg`) and a check that the loop was released.
    static func run(name: String, runner: LoopRunner, pools: StandardObservers.PoolScheme = .runLoopObservers,
                    _ body: (AppHarness) -> ScenarioOutcome) -> ScenarioResult {
        let session = session(runner: runner, pools: pools, body)
        var outcome = session.value
        outcome.checks.append(session.releaseCheck)
        return outcome.result(name: name, entries: session.entries, inputs: session.inputs)
    }

    /// Builds the app on the calling thread, runs `body` and tears the app down; returns the
    /// body's value with the recorded trace.
    static func session<T>(runner: LoopRunner, pools: StandardObservers.PoolScheme = .runLoopObservers,
                           _ body: (AppHarness) -> T) -> AppSession<T> {
        let clock = VirtualClock()
        let pipeline = CommitPipeline(clock: LoopTransactionClock(clock))
        return pipeline.asCurrent {
            let value: T
            let entries: [TraceEntry]
            let inputs: [TraceInput]
            weak var releasedLoop: Loop?
            do {
                let app = AppHarness(clock: clock, loop: Loop(clock: clock), pipeline: pipeline, pools: pools,
                                     runner: runner)
                releasedLoop = app.loop
                value = body(app)
                app.tearDown()
                entries = app.recorder.entries
                inputs = app.recorder.inputs
            }
            return AppSession(value: value, entries: entries, inputs: inputs, loopReleased: releasedLoop == nil)
        }
    }

    /// Runs the loop once in `mode`, through ``runner``: `loop.run(mode:timeout:…)` by default.
    @discardableResult
    func runLoop(mode: Loop.Mode, timeout seconds: Double, returnAfterSourceHandled: Bool = false) -> Loop.RunResult {
        runner.run(loop, mode: mode, timeout: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
    }

    /// Sets the work of the `__handleEventQueue` source0 (the app's touch handling).
    func onEvent(_ work: @escaping () -> Void) { handler.work = work }

    /// Posts a message to the event port from "the system": the loop wakes for a source1.
    func sendTouch() {
        do { try eventPort.send([1]) } catch {
            preconditionFailure("the harness's event port has no capacity limit and is never invalidated: \(error)")
        }
    }

    /// `[tableView reloadData]`: marks the table view; its cells are laid out at the next commit.
    func reloadData() { tableView.setNeedsLayout() }

    /// Removes everything the app installed, so the loop (and its descriptors) can be released.
    private func tearDown() {
        handler.work = nil
        eventQueue.invalidate()
        eventPort.invalidate()
        activityObserver.invalidate()
        standard.uninstall()
        loop.eventSink = nil
        pipeline.sink = FrameLog()
    }
}

/// What `AppHarness.session` returns.
struct AppSession<T> {
    let value: T
    let entries: [TraceEntry]
    let inputs: [TraceInput]
    /// The loop was deallocated once the app was torn down.
    let loopReleased: Bool

    var releaseCheck: ScenarioCheck { releaseCheck("the loop") }

    /// The release check, naming the run (e.g. "the per-callout run's loop").
    func releaseCheck(_ what: String) -> ScenarioCheck {
        ScenarioCheck("\(what) was released after teardown (no retain cycle keeps its descriptors open)", loopReleased)
    }
}

extension AppSession: Sendable where T: Sendable {}

/// What a scenario body found; `AppHarness.run` turns it into a `ScenarioResult`.
struct ScenarioOutcome {
    var expected: [String]
    var produced: [String]
    var checks: [ScenarioCheck] = []
    /// Charts and other files beyond the standard log, JSON and timeline.
    var artifacts: [ScenarioArtifact] = []
    /// Overrides the standard turn timeline's options.
    var timelineHidesObservers = false

    /// The result with the standard artifacts made from `entries`.
    func result(name: String, entries: [TraceEntry], inputs: [TraceInput] = [], crossThread: ScenarioInputs? = nil) -> ScenarioResult {
        let verbose = TextLogExporter.verboseText(entries)
        var files = [
            ScenarioArtifact(fileName: "\(name).log", contents: verbose),
            ScenarioArtifact(fileName: "\(name).json", contents: ChromeTraceExporter.json(entries, processName: name)),
            ScenarioArtifact(fileName: "\(name)-turns.svg", contents: TurnTimelineChart.svg(
                entries, title: "\(name): callouts per turn", hidesObservers: timelineHidesObservers, width: 1300)),
        ]
        files += artifacts
        return ScenarioResult(name: name, expected: expected, produced: produced, checks: checks,
                              fullTrace: verbose, artifacts: files, entries: entries, inputs: inputs,
                              externalInputs: crossThread?.externalInputs ?? [], replayProblems: crossThread?.replayProblems ?? [])
    }
}

/// The app's event handler; touched only on the loop's thread (set before the run, called by
/// the source0's perform, cleared at teardown).
private final class EventHandlerSlot {
    var work: (() -> Void)?
    func run() { work?() }
}
