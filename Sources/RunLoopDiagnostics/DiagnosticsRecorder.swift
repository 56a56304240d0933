import PThreads

/// Collects every diagnostic reported while it is recording, from any thread. Several recorders
/// may record at once (parallel tests each keep their own); each sees every diagnostic, so a test
/// filters by ``Diagnostic/id`` and ``Diagnostic/item``.
///
/// A test that provokes a diagnostic on purpose *captures* its id: while the recorder records,
/// diagnostics with that id go to the recorders only, not to standard error or the handler, so
/// the test run prints nothing for them and the test asserts them instead. Capturing is
/// process-wide (diagnostics come from loop threads as well as the test's own), so a test
/// running in parallel that reports the same id is captured too; its own recorder still sees it.
///
/// ```swift
/// import RunLoopDiagnostics
///
/// let recorder = DiagnosticsRecorder(capturing: ["example.demo"])
/// Diagnostics.report(.warning, "example.demo", "something was ignored", item: "demo-item")  // not printed
/// let seen = recorder.stop()
/// assert(seen.contains { $0.id == "example.demo" && $0.item == "demo-item" })
/// ```
///
/// Keep the recorder until the end of what it checks (read it or call ``stop()`` there): a
/// recorder that is released stops recording and capturing.
public final class DiagnosticsRecorder: Sendable {
    private let collected = Locked<[Diagnostic]>([])
    private let recording = Locked(true)
    private let capturedIDs: Set<DiagnosticID>

    /// Starts recording at once; what it records is still printed (or handed to the handler).
    public init() {
        capturedIDs = []
        Diagnostics.add(self)
    }

    /// Starts recording at once and captures the diagnostics with the given ids until it stops:
    /// they reach the recorders only, not standard error or the handler. Faults are recorded
    /// but never captured (the process stops after one).
    public init(capturing ids: Set<DiagnosticID>) {
        capturedIDs = ids
        Diagnostics.add(self)
    }

    /// The ids this recorder captures while it records.
    public var capturing: Set<DiagnosticID> { capturedIDs }

    deinit { Diagnostics.remove(self) }

    /// What was recorded so far.
    public var diagnostics: [Diagnostic] { collected.withLock { $0 } }

    /// The recorded diagnostics with the given id (and item, when given).
    public func diagnostics(withID id: DiagnosticID, item: String? = nil) -> [Diagnostic] {
        diagnostics.filter { $0.id == id && (item == nil || $0.item == item) }
    }

    /// Stops recording and returns everything recorded.
    @discardableResult
    public func stop() -> [Diagnostic] {
        let wasRecording = recording.withLock { state -> Bool in
            defer { state = false }
            return state
        }
        if wasRecording { Diagnostics.remove(self) }
        return diagnostics
    }

    func append(_ diagnostic: Diagnostic) { collected.withLock { $0.append(diagnostic) } }

    /// Called under the diagnostics lock: reads only the immutable id set.
    func captures(_ id: DiagnosticID) -> Bool { capturedIDs.contains(id) }
}
