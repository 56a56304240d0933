import RunLoopKit

/// A loop on a virtual clock, wired like an iOS main loop, that a test drives step by step and
/// checks at the end.
///
/// It owns:
/// - a ``VirtualClock`` and a detached `Loop` on it, bound to the creating thread;
/// - a `CommitPipeline` on the same clock (`LoopTransactionClock`), current on this thread while
///   the harness runs the loop or the body of ``run(pools:flushIfTooLate:maxPassesPerRun:reporter:fileID:filePath:line:column:_:)``;
/// - the `StandardObservers` in the common modes (pools, event hook, commit at 2000000);
/// - a `TraceRecorder` seeing every activity, callout and commit;
/// - the sources, ports and pipes its `add…` methods make (closed at teardown), and one source0
///   that is never signalled and keeps the common modes from running empty (a main loop's never
///   do, R4a; an empty mode would make every run return at once, R3).
///
/// Time only moves when the test says so: ``runTurn(mode:fileID:filePath:line:column:)`` and
/// ``runUntilIdle(mode:maxTurns:fileID:filePath:line:column:)`` do what is due now,
/// ``advance(by:mode:fileID:filePath:line:column:)`` lets virtual time pass with the loop running.
/// ``finish(fileID:filePath:line:column:)`` reports what the test left behind and tears down.
///
/// Failures go to ``reporter`` (a Swift Testing issue or an `XCTFail` by default) and are kept in
/// ``failures``. Use the harness on one thread, from a synchronous test.
///
/// ```swift
/// LoopTestHarness.run { harness in
///     let source = harness.addSource("s") { harness.recorder.log("performed") }
///     harness.signal(source)
///     harness.runUntilIdle()
///     harness.expectSteps("entry · beforeTimers · beforeSources · source(s) · log(performed)"
///         + " · beforeTimers · beforeSources · beforeWaiting · afterWaiting · exit")
/// }
/// ```
public final class LoopTestHarness {
    public let clock: VirtualClock
    public let loop: Loop
    public let pipeline: CommitPipeline
    public let standardObservers: StandardObservers
    public let recorder: TraceRecorder
    /// Every commit's snapshot, oldest first (also recorded in the trace).
    public let frames: FrameLog
    /// Where failures go besides ``failures``.
    public let reporter: any LoopTestReporter
    /// A run that makes this many passes without stopping is stopped and reported (a source0
    /// that signals itself keeps a loop busy forever, S3).
    public var maxPassesPerRun: Int
    /// Every failure reported so far, oldest first.
    public private(set) var failures: [LoopTestFailure] = []

    /// The label of the harness's own observer (pass guard, end of turn); hidden from steps.
    public static let controlObserverLabel = "LoopTestHarness.control"
    /// The label of the source0 that keeps the common modes from running empty, as a main
    /// loop's never do (R4a); it is never signalled.
    public static let keepAliveLabel = "LoopTestHarness.keepAlive"

    let control: HarnessControl
    let activityObserver: LoopObserver
    var owned = OwnedInputs()
    let poolEntriesAtStart: Int
    let createdAt: LoopTestSourceLocation
    var isFinished = false

    /// Builds the harness on the calling thread.
    /// - Parameters:
    ///   - start: the virtual clock's first reading.
    ///   - pools: the standard observers' pool scheme.
    ///   - flushIfTooLate: whether marks that waited longer than the pipeline's `tooLateBudget`
    ///     (one 60 Hz frame unless `pipeline.setTooLateBudget(_:)` changes it) while source0
    ///     callouts keep the loop busy are committed at once (TX13). Default true.
    ///   - maxPassesPerRun: see ``maxPassesPerRun``.
    ///   - reporter: where failures go (default: the running test framework).
    ///   - fileID: where failures that have no caller of their own point (a harness pipe that
    ///     cannot be read, an fd source the loop refused).
    ///   - filePath: the same, as XCTest wants it.
    ///   - line: the same, the line.
    ///   - column: the same, the column.
    public init(start: LoopInstant = .zero, pools: StandardObservers.PoolScheme = .runLoopObservers,
                flushIfTooLate: Bool = true, maxPassesPerRun: Int = 10_000,
                reporter: any LoopTestReporter = AutomaticLoopTestReporter(),
                fileID: String = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column) {
        createdAt = LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        clock = VirtualClock(start: start)
        loop = Loop(clock: clock)
        pipeline = CommitPipeline(clock: LoopTransactionClock(clock))
        frames = FrameLog()
        self.reporter = reporter
        self.maxPassesPerRun = max(1, maxPassesPerRun)
        poolEntriesAtStart = AutoreleasePool.statistics.pendingEntries

        recorder = TraceRecorder(clock: clock)
        recorder.attach(to: loop)
        activityObserver = recorder.observeActivities(on: loop)
        pipeline.sink = TraceCommitSink(recorder: recorder, forwardingTo: frames)
        // Completions that wait for animations become timers on the loop, so virtual time runs them.
        pipeline.completionScheduler = LoopCompletionScheduler(loop: loop)
        standardObservers = StandardObservers(installedOn: loop, pipeline: pipeline, pools: pools,
                                              flushIfTooLate: flushIfTooLate)
        control = HarnessControl(loop: loop, label: Self.controlObserverLabel)
        loop.add(control.observer, mode: .common)
        let keepAlive = LoopSource(label: Self.keepAliveLabel) {}
        owned.keepAlive = keepAlive
        loop.add(keepAlive, mode: .common)
    }

    /// Makes a harness, runs `body` with the harness's pipeline current (so marks made by the
    /// test itself go to it), then calls ``finish(fileID:filePath:line:column:)``.
    ///
    /// ```swift
    /// LoopTestHarness.run { harness in
    ///     harness.advance(by: .milliseconds(10))
    /// }
    /// ```
    @discardableResult
    public static func run<Result, Failure: Error>(
        pools: StandardObservers.PoolScheme = .runLoopObservers, flushIfTooLate: Bool = true,
        maxPassesPerRun: Int = 10_000, reporter: any LoopTestReporter = AutomaticLoopTestReporter(),
        fileID: String = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        _ body: (LoopTestHarness) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let harness = LoopTestHarness(pools: pools, flushIfTooLate: flushIfTooLate, maxPassesPerRun: maxPassesPerRun,
                                      reporter: reporter, fileID: fileID, filePath: filePath, line: line, column: column)
        defer { harness.finish(fileID: fileID, filePath: filePath, line: line, column: column) }
        return try harness.withCurrentPipeline { () throws(Failure) -> Result in try body(harness) }
    }

    /// Runs `body` with the harness's pipeline as the thread's current one, for test code that
    /// marks layers or opens transactions outside ``run(pools:flushIfTooLate:maxPassesPerRun:reporter:fileID:filePath:line:column:_:)``
    /// (for example between an XCTest `setUp` and `tearDown`). The driving methods do this themselves.
    public func withCurrentPipeline<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try pipeline.asCurrent(body)
    }

    /// Hands a failure to the reporter and keeps it.
    func report(_ message: String, at location: LoopTestSourceLocation) {
        let failure = LoopTestFailure(message, at: location)
        failures.append(failure)
        reporter.record(failure)
    }
}
