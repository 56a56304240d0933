import RunLoopCore
import Transactions

/// Lets a `CommitPipeline` measure time on a loop's clock (virtual in tests and scenarios), so
/// flush-if-too-late and animation completions follow the same time as the loop.
///
/// ```swift
/// let pipeline = CommitPipeline(clock: LoopTransactionClock(loop.clock))
/// ```
public final class LoopTransactionClock: TransactionClock {
    /// The loop clock read by `now`.
    public let base: any LoopClock

    public init(_ base: any LoopClock) { self.base = base }

    public var now: LoopInstant { base.now }
}

/// Schedules transaction completion blocks (those waiting for animations) as one-shot timers on a
/// loop, in its common modes, so they run even while the loop tracks.
///
/// ```swift
/// pipeline.completionScheduler = LoopCompletionScheduler(loop: loop)
/// ```
public final class LoopCompletionScheduler: CompletionScheduler {
    private let loop: Loop

    public init(loop: Loop) { self.loop = loop }

    public func schedule(after delay: Duration, _ work: @escaping () -> Void) {
        // Only a negative interval or tolerance makes the initializer throw; both are zero here.
        // A refused add (a torn-down loop) is reported by the loop as `loop.add-refused`.
        // The pipeline schedules on its own thread, the loop's: `work` is not `Sendable`.
        let timer = try! LoopTimer(after: delay, label: "transactionCompletion", onOwnerThreadOf: loop) { _ in work() }
        loop.add(timer, mode: .common)
    }
}
