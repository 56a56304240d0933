/// Why a completion block was called — Core Animation's "called immediately" has several causes,
/// and the block is told which one.
///
/// ```swift
/// LayerTransaction.setCompletionBlock { reason in
///     if reason == .replaced { return }
///     print("done:", reason)
/// }
/// ```
public enum CompletionReason: Sendable, Equatable, CustomStringConvertible {
    /// The transaction was committed and no animation was added to its group: called right after
    /// the commit (synchronously, at the end of the commit that carried the transaction).
    case committedWithoutAnimations
    /// Every animation added to the group finished (the longest one's duration elapsed after the
    /// commit, measured by the pipeline's completion scheduler).
    case animationsFinished
    /// The block was replaced by another `setCompletionBlock` in the same transaction: called
    /// immediately, inside that `setCompletionBlock` call, before it returns.
    case replaced

    public var description: String {
        switch self {
        case .committedWithoutAnimations: return "committedWithoutAnimations"
        case .animationsFinished: return "animationsFinished"
        case .replaced: return "replaced"
        }
    }
}

/// A completion block. Runs on the pipeline's thread.
public typealias TransactionCompletion = (CompletionReason) -> Void

/// Runs work after a delay; the pipeline uses it for completion blocks that wait for animations.
/// The umbrella can supply one backed by a run-loop timer; the default is a
/// `ClockCompletionScheduler` pumped with `CommitPipeline.runDueCompletions()`.
///
/// ```swift
/// final class TimerScheduler: CompletionScheduler {
///     func schedule(after delay: Duration, _ work: @escaping () -> Void) { /* add a one-shot timer */ }
/// }
/// pipeline.completionScheduler = TimerScheduler()
/// ```
public protocol CompletionScheduler: AnyObject {
    /// Calls `work` once, on the pipeline's thread, no earlier than `delay` from now. The pipeline
    /// passes only non-negative delays (animation durations are checked when they are set).
    func schedule(after delay: Duration, _ work: @escaping () -> Void)
}

/// A scheduler on an injected clock with an explicit pump: `runDue()` runs every item whose
/// deadline has passed, earliest first (ties in scheduling order).
///
/// ```swift
/// let clock = ManualTransactionClock()
/// let scheduler = ClockCompletionScheduler(clock: clock)
/// scheduler.schedule(after: .milliseconds(500)) { print("fired") }
/// try clock.advance(by: .milliseconds(500))
/// scheduler.runDue()   // prints "fired", returns 1
/// ```
public final class ClockCompletionScheduler: CompletionScheduler {
    private struct Item {
        let deadline: LoopInstant
        let sequence: UInt64
        let work: () -> Void
    }

    public let clock: any TransactionClock
    private var items: [Item] = []
    private var nextSequence: UInt64 = 0

    public init(clock: any TransactionClock) { self.clock = clock }

    public func schedule(after delay: Duration, _ work: @escaping () -> Void) {
        // A negative delay runs at the next pump, like a zero one (`advanced(by:)` saturates).
        let deadline = clock.now.advanced(by: max(delay, .zero))
        items.append(Item(deadline: deadline, sequence: nextSequence, work: work))
        nextSequence += 1
    }

    /// The earliest deadline waiting, if any (e.g. to arm a timer).
    public var nextDeadline: LoopInstant? { items.lazy.map(\.deadline).min() }

    /// Number of items waiting.
    public var pendingCount: Int { items.count }

    /// Runs the items that are due now; items scheduled by them run at a later pump.
    @discardableResult
    public func runDue() -> Int {
        let now = clock.now
        var due: [Item] = []
        items.removeAll { item in
            if item.deadline <= now { due.append(item); return true }
            return false
        }
        due.sort { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }
        for item in due { item.work() }
        return due.count
    }

    /// Drops every waiting item without running it.
    public func cancelAll() { items.removeAll() }
}
