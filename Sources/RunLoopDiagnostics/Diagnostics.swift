import PThreads

/// The one place every RunLoopKit module reports a ``Diagnostic``.
///
/// By default each diagnostic is printed to standard error, once per id and item for the whole
/// process (as CoreFoundation logs a misuse once and carries on). A replacement handler sees every
/// occurrence; so does each ``DiagnosticsRecorder``, which tests use to assert what was reported.
/// A diagnostic that a recorder *captures* (``DiagnosticsRecorder/init(capturing:)``) reaches the
/// recorders only: neither standard error nor the handler sees it, so a test that provokes it on
/// purpose prints nothing. A ``Diagnostic/Severity/fault`` is never captured: the
/// process stops after it.
///
/// ```swift
/// import RunLoopDiagnostics
///
/// Diagnostics.setHandler { diagnostic in
///     // forward to swift-log, a test log, a metrics counter …
///     print("runloopkit:", diagnostic)
/// }
/// Diagnostics.resetHandler()   // back to standard error
/// ```
public enum Diagnostics {
    /// Receives diagnostics on the thread that reported them.
    public typealias Handler = @Sendable (Diagnostic) -> Void

    private struct State {
        var handler: Handler?            // nil: the standard-error printer
        var printed: Set<String> = []    // the printer's once-per-id-and-item memory
        var recorders: [DiagnosticsRecorder] = []
    }

    private static let state = Locked(State())

    /// Replaces the handler for the whole process. It is called on the reporting thread, and
    /// runs with no RunLoopKit lock held, so it may call back into the library: add a timer to
    /// the loop whose failure it reports, invalidate an item, run a loop. A failure inside a
    /// loop's critical section (re-arming a mode's timer, creating a mode, removing an fd whose
    /// descriptor was closed first) is reported once that section has released its lock.
    /// (Debug builds check it: a report made while the thread holds a RunLoopKit lock stops the
    /// process.) Like any callback, a handler that blocks holds up the thread that reported.
    public static func setHandler(_ handler: @escaping Handler) {
        state.withLock { $0.handler = handler }
    }

    /// Restores the default handler (standard error) and forgets which lines it printed.
    public static func resetHandler() {
        state.withLock {
            $0.handler = nil
            $0.printed = []
        }
    }

    /// Reports `diagnostic` to every active recorder, and to the handler unless a recorder
    /// captures its id.
    public static func report(_ diagnostic: Diagnostic) {
        #if DEBUG
        // The handler's promise: it never runs under a library lock, so it may call back into
        // the library. Every RunLoopKit lock is a PThreads mutex, which debug builds count.
        let held = HeldMutexes.count
        precondition(held == 0,
                     "Diagnostics.report called while this thread holds \(held) RunLoopKit lock(s): defer the report until they are released (\(diagnostic))")
        #endif
        let (handler, recorders, printFirst, captured) = state.withLock {
            state -> (Handler?, [DiagnosticsRecorder], Bool, Bool) in
            // A fault is never captured: the process stops right after it, and this line is
            // all that says why.
            let captured = diagnostic.severity < .fault && state.recorders.contains { $0.captures(diagnostic.id) }
            var first = false
            // A captured diagnostic is not remembered as printed: if it comes again when nobody
            // expects it, that occurrence is printed.
            if state.handler == nil && !captured {
                first = state.printed.insert("\(diagnostic.id.rawValue)\u{1}\(diagnostic.item ?? "")").inserted
            }
            return (state.handler, state.recorders, first, captured)
        }
        for recorder in recorders { recorder.append(diagnostic) }
        if captured { return }
        if let handler {
            handler(diagnostic)
        } else if printFirst {
            StandardErrorLine.write("RunLoopKit \(diagnostic)")
        }
    }

    /// Reports a diagnostic built from its parts.
    public static func report(_ severity: Diagnostic.Severity, _ id: DiagnosticID, _ message: String,
                              item: String? = nil) {
        report(Diagnostic(severity: severity, id: id, message: message, item: item))
    }

    static func add(_ recorder: DiagnosticsRecorder) { state.withLock { $0.recorders.append(recorder) } }
    static func remove(_ recorder: DiagnosticsRecorder) {
        state.withLock { $0.recorders.removeAll { $0 === recorder } }
    }
}
