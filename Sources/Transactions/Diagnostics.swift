/// Something the commit machinery wants a human to know about. Delivered to the pipeline's
/// `diagnosticsHandler` (default: one line on standard error).
///
/// ```swift
/// CommitPipeline.current.diagnosticsHandler = { diagnostic in log.append(diagnostic.message) }
/// ```
public enum TransactionDiagnostic: Sendable, Equatable, CustomStringConvertible {
    /// Layout kept re-dirtying layers; after `rounds` rounds the commit stopped laying out and left
    /// the named layers (still needing layout) for the next commit.
    case layoutLoop(rounds: Int, layers: [String])
    /// A thread ended while its implicit (and/or explicit) transaction was still open. Its changes
    /// were discarded and everything it held was released.
    case threadExitedWithUncommittedTransaction(thread: String, explicitDepth: Int)
    /// A commit was requested while one was already running on this thread; the request was folded
    /// into the running commit or deferred to the next one.
    case reentrantCommitIgnored(reason: CommitReason)

    /// The human-readable text (what the default handler prints).
    public var message: String {
        switch self {
        case let .layoutLoop(rounds, layers):
            return "Transactions: warning, layout continuously requested, giving up after \(rounds) rounds;"
                + " left for the next commit: \(layers.joined(separator: ", "))"
        case let .threadExitedWithUncommittedTransaction(thread, explicitDepth):
            let explicit = explicitDepth > 0 ? " (\(explicitDepth) explicit Transaction.begin() without commit)" : ""
            return "Transactions: warning, deleted thread with uncommitted Transaction\(explicit) on \(thread);"
                + " call Transaction.flush() before the thread exits, or run a loop with the commit observer installed"
        case let .reentrantCommitIgnored(reason):
            return "Transactions: warning, commit (\(reason)) requested during a running commit; folded into it or deferred"
        }
    }

    public var description: String { message }
}

/// Receives diagnostics on the pipeline's own thread.
public typealias TransactionDiagnosticsHandler = (TransactionDiagnostic) -> Void
