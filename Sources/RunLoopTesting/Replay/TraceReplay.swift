import RunLoopKit

/// Records a workload on a fresh loop on a `VirtualClock`, and replays a trace by running the
/// workload again on another fresh loop, comparing entry by entry.
///
/// A workload is the code that builds the loop's items and runs it, making its inputs through
/// the ``ReplayRecorder`` it is given. Replaying re-runs it on the calling thread with the clock
/// at the recorded start, applies the inputs recorded as `from=external` itself (just before
/// the wait of the pass they arrived in) and reports the first divergence.
///
/// ```swift
/// func workload(_ recorder: ReplayRecorder) {
///     let timer = try! LoopTimer(fireAt: recorder.clock.now.advanced(by: .milliseconds(5)), label: "t0") { _ in }
///     recorder.loop.add(timer, mode: .default)
///     recorder.loop.run(mode: .default, timeout: 0.01)
/// }
/// let trace = try TraceReplay.record(workload)
/// let outcome = try TraceReplay.replay(try ReplayTrace(parsing: trace.text), workload: workload)
/// print(outcome.divergence == nil)   // true
/// ```
public enum TraceReplay {
    /// How long a workload may run (real time) before its loop is stopped: a wait with no
    /// deadline on the virtual clock blocks until an input ends it, and a replay whose inputs
    /// no longer fit would otherwise block for ever.
    public static let defaultStallLimit: Duration = .seconds(30)

    /// Runs `workload` on a fresh loop on a `VirtualClock` starting at `clockStart` (on the
    /// calling thread) and returns its trace. The loop is torn down afterwards. Throws
    /// ``ReplayRecorderError/stalled(_:)`` when the loop had to be stopped after `stallLimit`.
    public static func record(clockStart: LoopInstant = .zero, observeActivities: Bool = false,
                              stallLimit: Duration = defaultStallLimit,
                              _ workload: (ReplayRecorder) throws -> Void) throws -> ReplayTrace {
        let result = try session(clockStart: clockStart, observeActivities: observeActivities, stallLimit: stallLimit,
                                 replaying: nil, workload)
        if let stall = result.problems.first { throw ReplayRecorderError.stalled(stall) }
        return result.trace
    }

    /// Runs `workload` again, on a fresh loop whose clock starts at `expected.clockStart`, and
    /// compares the trace it makes with `expected`. A loop still running after `stallLimit` is
    /// stopped (each time the limit passes again) and the outcome's problems say so.
    public static func replay(_ expected: ReplayTrace, observeActivities: Bool = false,
                              stallLimit: Duration = defaultStallLimit,
                              workload: (ReplayRecorder) throws -> Void) throws -> ReplayOutcome {
        let result = try session(clockStart: expected.clockStart, observeActivities: observeActivities,
                                 stallLimit: stallLimit, replaying: expected, workload)
        return ReplayOutcome(actual: result.trace, divergence: ReplayDivergence.first(expected: expected, actual: result.trace),
                             problems: result.problems)
    }

    private static func session(clockStart: LoopInstant, observeActivities: Bool, stallLimit: Duration,
                                replaying expected: ReplayTrace?,
                                _ workload: (ReplayRecorder) throws -> Void) throws -> (trace: ReplayTrace, problems: [String]) {
        let clock = VirtualClock(start: clockStart)
        let loop = Loop(clock: clock)
        let recorder = ReplayRecorder(loop: loop, clock: clock, observeActivities: observeActivities,
                                      capacity: 1_000_000, replaying: expected)
        let watchdog = Task.detached {
            while true {
                do { try await Task.sleep(for: stallLimit) } catch { return }   // cancelled: the workload ended
                recorder.problem("the loop was still running after \(stallLimit) of real time and was stopped:"
                                 + " a wait with no deadline that no input ended")
                loop.stop()
            }
        }
        defer {
            watchdog.cancel()
            loop.eventSink = nil
            loop.tearDown()
        }
        try workload(recorder)
        return (try recorder.trace(), recorder.replayProblems)
    }
}

/// What a replay found.
///
/// ```swift
/// let outcome = try TraceReplay.replay(trace) { recorder in /* the same workload */ }
/// #expect(outcome.divergence == nil, "\(outcome)")
/// ```
public struct ReplayOutcome: Sendable, CustomStringConvertible {
    /// The trace the replay made.
    public let actual: ReplayTrace
    /// The first entry where it differs from the recording; nil when identical.
    public let divergence: ReplayDivergence?
    /// External inputs the replay could not apply (an unregistered label, a pass that never waited).
    public let problems: [String]

    /// True when the traces are identical and every external input was applied.
    public var matches: Bool { divergence == nil && problems.isEmpty }

    public var description: String {
        var lines = [divergence.map { "diverged at \($0)" } ?? "identical (\(actual.entries.count) entries)"]
        lines += problems
        return lines.joined(separator: "\n")
    }
}
