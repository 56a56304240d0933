import RunLoopCore
import Transactions

/// Core Animation's place in the run loop: the commit observer at order 2000000 on
/// BeforeWaiting | Exit, with public hook points at 1999000 (`_beforeCACommitHandler`) and
/// 2001000 (`_afterCACommitHandler`), plus UIKit's flush-if-too-late after source0 callouts.
///
/// - The pipeline's `wakeUpHandler` becomes `loop.wakeUp()`, so marks made during display (which
///   belong to the next commit) turn the loop once more instead of waiting for another event.
/// - Each run's Entry raises the pipeline's `runLevel` and its Exit lowers it after the commit, so
///   a commit at a nested run's Exit does not run post-commit work registered by the outer level.
/// - With `flushIfTooLate` (the default), a source0 callout that leaves marks older than the
///   pipeline's `tooLateBudget` ends with a forced commit
///   (`_UIApplicationFlushRunLoopCATransactionIfTooLate`), because a loop kept busy by source0s
///   never reaches BeforeWaiting.
///
/// Create it on the loop's own thread, with that thread's pipeline.
///
/// ```swift
/// let commits = LoopCommitObservers(installedOn: loop, pipeline: .current)
/// commits.addBeforeCommitHandler { print("before commit") }
/// layer.setNeedsLayout()            // committed at the next BeforeWaiting
/// ```
public final class LoopCommitObservers {
    /// The pipeline committed by the observer.
    public let pipeline: CommitPipeline
    /// Order 1999000, BeforeWaiting | Exit: runs the before-commit handlers.
    public let beforeCommitObserver: LoopObserver
    /// Order 2000000, BeforeWaiting | Exit: `pipeline.commitIfNeeded`.
    public let commitObserver: LoopObserver
    /// Order 2001000, BeforeWaiting | Exit: runs the after-commit handlers.
    public let afterCommitObserver: LoopObserver
    /// Entry, first of all: raises the pipeline's run level for the run that starts.
    public let runLevelObserver: LoopObserver

    private let handlers: CommitHandlers
    private let lateFlush: FlushIfTooLate?
    private weak var loop: Loop?

    /// Installs the observers in `modes` (default: the common modes) of `loop`.
    /// - Parameters:
    ///   - loop: the loop to observe; install on its own thread.
    ///   - pipeline: the commit pipeline the observers drive.
    ///   - modes: the modes the observers join.
    ///   - flushIfTooLate: whether a source0 callout that leaves marks older than the pipeline's
    ///     `tooLateBudget` (default one 60 Hz frame; `setTooLateBudget(_:)` changes it) ends
    ///     with a forced commit. Default true.
    public init(installedOn loop: Loop, pipeline: CommitPipeline, modes: [Loop.Mode] = [.common],
                flushIfTooLate: Bool = true) {
        self.pipeline = pipeline
        self.loop = loop
        let handlers = CommitHandlers()
        self.handlers = handlers
        let hookActivities: Loop.Activity = [.beforeWaiting, .exit]
        beforeCommitObserver = LoopObserver(
            activities: hookActivities, order: ObserverOrder.beforeCommit, label: ObserverLabel.beforeCommit,
            onOwnerThreadOf: loop
        ) { _, activity in
            handlers.runBefore(activity)
        }
        commitObserver = LoopObserver(
            activities: hookActivities, order: ObserverOrder.commit, label: ObserverLabel.commit,
            onOwnerThreadOf: loop
        ) { _, activity in
            pipeline.commitIfNeeded(reason: activity == .exit ? .exit : .beforeWaiting)
            if activity == .exit { pipeline.runLevel = max(0, pipeline.runLevel - 1) }
        }
        afterCommitObserver = LoopObserver(
            activities: hookActivities, order: ObserverOrder.afterCommit, label: ObserverLabel.afterCommit,
            onOwnerThreadOf: loop
        ) { _, activity in
            handlers.runAfter(activity)
        }
        runLevelObserver = LoopObserver(
            activities: .entry, order: Int(Int32.min), label: ObserverLabel.transactionRunLevel,
            onOwnerThreadOf: loop
        ) { _, _ in
            pipeline.runLevel += 1
        }
        pipeline.wakeUpHandler = { [weak loop] in loop?.wakeUp() }
        if flushIfTooLate {
            let lateFlush = FlushIfTooLate(loop.ownerThreadCallout("flushIfTooLate") { pipeline.flushIfTooLate() })
            self.lateFlush = lateFlush
            loop.addCalloutInterceptor(lateFlush)
        } else {
            lateFlush = nil
        }
        for mode in modes {
            for observer in [runLevelObserver, beforeCommitObserver, commitObserver, afterCommitObserver] {
                loop.add(observer, mode: mode)
            }
        }
    }

    /// Adds work for the 1999000 hook point (each BeforeWaiting and Exit, before the commit).
    public func addBeforeCommitHandler(_ handler: @escaping (Loop.Activity) -> Void) {
        handlers.before.append(handler)
    }

    /// Adds work for the 2001000 hook point (each BeforeWaiting and Exit, after the commit).
    public func addAfterCommitHandler(_ handler: @escaping (Loop.Activity) -> Void) {
        handlers.after.append(handler)
    }

    /// Removes the observers and the flush-if-too-late interceptor.
    public func uninstall() {
        for observer in [runLevelObserver, beforeCommitObserver, commitObserver, afterCommitObserver] {
            observer.invalidate()
        }
        if let lateFlush { loop?.removeCalloutInterceptor(lateFlush) }
        pipeline.wakeUpHandler = nil
    }
}

/// The work attached to the 1999000 and 2001000 hook points; confined to the loop's thread.
private final class CommitHandlers {
    var before: [(Loop.Activity) -> Void] = []
    var after: [(Loop.Activity) -> Void] = []

    func runBefore(_ activity: Loop.Activity) { for handler in before { handler(activity) } }
    func runAfter(_ activity: Loop.Activity) { for handler in after { handler(activity) } }
}

/// Ends each source0 callout with `flushIfTooLate()`, as UIKit's event-queue source does.
private final class FlushIfTooLate: LoopCalloutInterceptor {
    /// The pipeline's `flushIfTooLate()`, callable only on the loop's thread (checked at each
    /// call), where the pipeline belongs. Not a `LoopBound`: that holds its loop strongly, and the
    /// loop holds this.
    private let flush: @Sendable () -> Void

    init(_ flush: @escaping @Sendable () -> Void) { self.flush = flush }

    func willCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {}

    func didCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        if kind == .source0 { flush() }
    }
}
