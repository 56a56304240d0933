import PThreads

/// Keeps the failures instead of failing a test: for tests of the toolkit itself, and for code
/// that drives a harness outside a test framework.
///
/// ```swift
/// let collected = CollectingLoopTestReporter()
/// let harness = LoopTestHarness(reporter: collected)
/// harness.finish()
/// print(collected.failures.isEmpty)   // true: nothing was left behind
/// ```
public final class CollectingLoopTestReporter: LoopTestReporter {
    private let storage = Locked<[LoopTestFailure]>([])

    public init() {}

    public func record(_ failure: LoopTestFailure) { storage.withLock { $0.append(failure) } }

    /// Every failure recorded so far, oldest first.
    public var failures: [LoopTestFailure] { storage.withLock { $0 } }

    /// The messages of ``failures``.
    public var messages: [String] { failures.map(\.message) }

    /// Forgets the failures recorded so far.
    public func removeAll() { storage.withLock { $0.removeAll() } }
}
