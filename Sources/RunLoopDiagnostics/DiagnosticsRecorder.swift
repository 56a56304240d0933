import PThreads

/// Collects every diagnostic reported while it is recording, from any thread. Several recorders
/// may record at once (parallel tests each keep their own); each sees every diagnostic, so a test
/// filters by ``Diagnostic/id`` and ``Diagnostic/item``.
///
/// ```swift
/// import RunLoopDiagnostics
///
/// let recorder = DiagnosticsRecorder()
/// Diagnostics.report(.warning, "example.demo", "something was ignored", item: "demo-item")
/// let seen = recorder.stop()
/// assert(seen.contains { $0.id == "example.demo" && $0.item == "demo-item" })
/// ```
public final class DiagnosticsRecorder: Sendable {
    private let collected = Locked<[Diagnostic]>([])
    private let recording = Locked(true)

    /// Starts recording at once.
    public init() { Diagnostics.add(self) }

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
}
