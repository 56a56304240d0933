import RunLoopDiagnostics

/// The identifiers of the diagnostics the commit machinery reports through `Diagnostics`.
///
/// ```swift
/// import RunLoopDiagnostics
///
/// let recorder = DiagnosticsRecorder()
/// // … a layout that keeps re-dirtying itself …
/// recorder.diagnostics(withID: .commitLayoutLoop, item: "feedback").count   // 1
/// ```
extension DiagnosticID {
    /// Layout kept being requested: after `maxLayoutRounds` rounds the commit stopped laying out
    /// and left the layers for the next commit. Item: the layers' names, comma-separated.
    public static let commitLayoutLoop: DiagnosticID = "commit.layout-loop"
    /// A thread ended with its implicit (or an explicit) transaction still open; its changes were
    /// discarded and everything the pipeline held was released. Item: the thread.
    public static let commitThreadExitedUncommitted: DiagnosticID = "commit.thread-exited-uncommitted"
    /// A commit (`flush()`) was asked for while one was running on the thread; the running commit
    /// or the next one carries the work. Item: the pipeline's thread.
    public static let commitReentrantCommit: DiagnosticID = "commit.reentrant-commit"
}

extension CommitPipeline {
    func reportLayoutLoop(rounds: Int, layers: [LayerIdentity]) {
        Diagnostics.report(.warning, .commitLayoutLoop,
                           "layout was requested again in each of \(rounds) rounds of one commit on \(threadName);"
                               + " the commit stopped laying out and left these layers for the next commit",
                           item: layers.map(\.name).joined(separator: ", "))
    }

    func reportThreadExitedUncommitted() {
        let explicit = state.explicitDepth > 0
            ? " with \(state.explicitDepth) explicit LayerTransaction.begin() not committed"
            : " with its implicit transaction open"
        Diagnostics.report(.warning, .commitThreadExitedUncommitted,
                           "the thread ended\(explicit); its changes were discarded. Call"
                               + " LayerTransaction.flush() before the thread exits, or run a loop with the commit observer",
                           item: threadName)
    }

    func reportReentrantCommit(reason: CommitReason) {
        Diagnostics.report(.warning, .commitReentrantCommit,
                           "a commit (\(reason)) was requested while a commit was running; the running commit"
                               + " or the next one carries the work",
                           item: threadName)
    }
}
