/// The per-thread commit machinery: the transaction stack, the dirty-layer queue and the commit
/// itself. `CommitPipeline.current` is this thread's pipeline; `LayerTransaction` and `Layer` use it.
///
/// A commit runs, in this order (nothing else interleaves):
/// 1. before-commit hooks (marks made here belong to this commit);
/// 2. layout rounds: dirty layers shallowest first; a layer dirtied during layout is laid out in
///    the same commit (next round); after `maxLayoutRounds` rounds it stops, reports the
///    diagnostic `commit.layout-loop` naming the layers, and leaves them for the next commit;
/// 3. display of dirty layers in tree order (pre-order: parents before children, siblings back to
///    front); marks made from here on go to the **next** commit and call `wakeUpHandler`;
/// 4. prepare: the immutable `CommitSnapshot` is built;
/// 5. the snapshot is delivered to `sink` (default: a `FrameLog`);
/// 6. after-commit hooks, then one-shot post-commit callbacks eligible at `runLevel`;
/// 7. completion blocks of the committed transactions.
///
/// The pipeline does not know any run loop. A host calls `commitIfNeeded(reason:)` from its
/// before-waiting/exit observer (order 2000000 in CF terms), `flushIfTooLate()` after source
/// callouts, sets `wakeUpHandler`, `runLevel` and optionally `completionScheduler`.
///
/// ```swift
/// let pipeline = CommitPipeline.current
/// pipeline.wakeUpHandler = { loop.wakeUp() }
/// // in the loop's BeforeWaiting|Exit observer (order 2000000):
/// pipeline.commitIfNeeded(reason: .beforeWaiting)
/// ```
///
/// Thread confinement: a pipeline is used only on the thread it belongs to (it is not `Sendable`).
public final class CommitPipeline {
    /// Where a pipeline is in its commit.
    public enum Phase: Int, Sendable, Comparable, CustomStringConvertible {
        case idle, beforeCommitHooks, layout, display, prepare, deliver, afterCommitHooks, completions

        public static func < (a: Phase, b: Phase) -> Bool { a.rawValue < b.rawValue }

        public var description: String {
            switch self {
            case .idle: return "idle"
            case .beforeCommitHooks: return "beforeCommitHooks"
            case .layout: return "layout"
            case .display: return "display"
            case .prepare: return "prepare"
            case .deliver: return "deliver"
            case .afterCommitHooks: return "afterCommitHooks"
            case .completions: return "completions"
            }
        }
    }

    /// Identifies a registered hook, for `removeHook(_:)`.
    public struct HookToken: Hashable, Sendable {
        let id: UInt64
    }

    static let layoutPhase = 0
    static let displayPhase = 1

    // MARK: Configuration

    // Each `@exclusivity(unchecked)` below ("unchecked: …") is safe because a pipeline is confined
    // to its thread and never holds two accesses to one property at once (loops iterate copies,
    // swaps pair distinct properties); the comment says how often it is touched. The dynamic
    // checks are ~35 instructions each: restoring them on the once-per-commit scalars alone adds
    // ~250 instructions to a ~1,900-instruction commit of one layer.

    /// Time source for `flushIfTooLate` and the default completion scheduler.
    public let clock: any TransactionClock
    /// Rounds of layout per commit before giving up (default 4, as GTK's frame clock).
    public let maxLayoutRounds: Int
    /// Called when work was queued for the next commit *during* a commit (marks made in display
    /// or later, or layout left over by the round cap), so a host loop about to sleep turns once
    /// more. The umbrella sets it to the loop's `wakeUp()`.
    public var wakeUpHandler: (() -> Void)?
    /// Receives each commit's snapshot. Default: a `FrameLog` (also reachable as `frameLog`).
    // unchecked: read once per commit (deliver)
    @exclusivity(unchecked) public var sink: any CommitSink
    /// Runs completion blocks that wait for animations. Default: a `ClockCompletionScheduler` on
    /// `clock`, pumped by `runDueCompletions()`.
    public var completionScheduler: any CompletionScheduler
    /// How long pending work may wait before `flushIfTooLate()` forces a commit.
    /// Default ``defaultTooLateBudget``, one 60 Hz frame; set with ``setTooLateBudget(_:)``.
    public private(set) var tooLateBudget: Duration = CommitPipeline.defaultTooLateBudget
    /// One 60 Hz frame: 16 666 667 ns.
    public static let defaultTooLateBudget: Duration = .nanoseconds(16_666_667)

    /// Sets ``tooLateBudget``.
    /// - Throws: `TransactionError.negativeDuration` for a negative budget (nothing changes).
    public func setTooLateBudget(_ budget: Duration) throws(TransactionError) {
        guard budget >= .zero else { throw .negativeDuration(budget, what: "setTooLateBudget") }
        tooLateBudget = budget
    }
    /// The host loop's nesting level (0 = no loop running). The umbrella raises it on a run's Entry
    /// and lowers it after that run's Exit commit. Post-commit callbacks remember the level they
    /// were registered at and run only at a commit whose level is not deeper (see
    /// `addPostCommitCallback(runLevel:_:)`).
    // unchecked: read by each commit with post-commit callbacks
    @exclusivity(unchecked) public var runLevel: Int = 0

    // MARK: State

    /// True when a commit would do something: an implicit transaction is open (a mark was made,
    /// or work was left for the next commit). Cheap: one stored Bool.
    // unchecked: the idle check: one load per loop turn
    @exclusivity(unchecked) public private(set) var needsCommit = false
    /// The current commit step (`.idle` outside a commit).
    // unchecked: read by every mark and callout record
    @exclusivity(unchecked) public private(set) var phase: Phase = .idle
    /// Number of commits so far (the last snapshot's `frameNumber`).
    // unchecked: bumped once per commit
    @exclusivity(unchecked) public private(set) var frameNumber: UInt64 = 0
    /// When the work now waiting for a commit started waiting, on `clock`: the time of the mark
    /// (or other transaction use) that opened the implicit transaction; for work queued during a
    /// commit (marks in display or later, layout left over by the cap) the time that commit
    /// finished. nil when nothing waits. `flushIfTooLate()` compares against it.
    // unchecked: read by every mark and commit
    @exclusivity(unchecked) public private(set) var pendingSince: LoopInstant?
    /// When the last commit finished, on `clock`.
    // unchecked: written once per commit
    @exclusivity(unchecked) public private(set) var lastCommitTime: LoopInstant?
    /// The thread this pipeline belongs to (for messages).
    public let threadName: String

    let queue: PhasedQueue<LayerRef>
    // unchecked: read by every mark
    @exclusivity(unchecked) var scopes: [TransactionScope] = []
    // unchecked: read by every commit check
    @exclusivity(unchecked) var explicitDepth = 0
    // unchecked: cleared once per commit
    @exclusivity(unchecked) var flushRequested = false
    // unchecked: swapped once per commit
    @exclusivity(unchecked) var pendingCompletions: [PendingCompletion] = []
    // unchecked: swapped once per commit
    @exclusivity(unchecked) private var completionScratch: [PendingCompletion] = []
    // unchecked: read once per commit
    @exclusivity(unchecked) private var beforeHooks: [(token: HookToken, hook: () -> Void)] = []
    // unchecked: read once per commit
    @exclusivity(unchecked) private var afterHooks: [(token: HookToken, hook: (CommitSnapshot) -> Void)] = []
    // unchecked: read once per commit
    @exclusivity(unchecked) private var postCommitCallbacks: [(level: Int, callback: () -> Void)] = []
    private var nextHookID: UInt64 = 0
    // unchecked: appended per layer laid out
    @exclusivity(unchecked) private var laidOutRecord: [LayerIdentity] = []
    // unchecked: appended per layer displayed
    @exclusivity(unchecked) private var displayedRecord: [DisplayedLayer] = []
    /// Emptied record buffers of the last commit, reused by the next one.
    // unchecked: swapped once per commit
    @exclusivity(unchecked) private var spareLaidOutRecord: [LayerIdentity] = []
    // unchecked: swapped once per commit
    @exclusivity(unchecked) private var spareDisplayedRecord: [DisplayedLayer] = []
    /// One strong reference per queued layer (queue keys are unretained `LayerRef`s). A layer is
    /// added when it enters its first phase and dropped after a commit once it has left them all.
    // unchecked: appended per first mark of a layer
    @exclusivity(unchecked) private var queuedLayers: [Layer] = []
    // unchecked: reset once per commit
    @exclusivity(unchecked) private var wokeDuringThisCommit = false

    /// Creates a pipeline (normally you use `CommitPipeline.current`; a separate one is useful in
    /// tests together with `asCurrent(_:)`).
    ///
    /// ```swift
    /// let pipeline = CommitPipeline(clock: ManualTransactionClock())
    /// pipeline.asCurrent { layer.setNeedsLayout(); LayerTransaction.flush() }
    /// ```
    public init(clock: any TransactionClock = SystemTransactionClock.shared, maxLayoutRounds: Int = 4) {
        precondition(maxLayoutRounds >= 1, "CommitPipeline: maxLayoutRounds must be >= 1, got \(maxLayoutRounds)")
        self.clock = clock
        self.maxLayoutRounds = maxLayoutRounds
        self.sink = FrameLog()
        self.completionScheduler = ClockCompletionScheduler(clock: clock)
        self.threadName = currentThreadDescription()
        // Membership lives in a bit per phase on the layer (`LayerRef.Membership`): no hashing
        // and no closure call on the mark path.
        queue = PhasedQueue(
            phases: [
                // Live depth: a layer may have moved between its mark and the commit.
                .init("layout", reentrancy: .nextRound(maxRounds: maxLayoutRounds),
                      order: .rank { ref in ref.raw._withUnsafeGuaranteedRef { $0.depth } }),
                .init("display", reentrancy: .nextDrain,
                      order: .rank { ref in ref.raw._withUnsafeGuaranteedRef { $0.treeOrderRank } }),
            ])
    }

    /// The default sink, when it is still installed.
    public var frameLog: FrameLog? { sink as? FrameLog }

    /// True while a commit runs.
    public var isCommitting: Bool { phase != .idle }
    /// Explicit `begin()`s not yet committed.
    public var explicitTransactionDepth: Int { explicitDepth }
    /// True when the implicit transaction is open.
    public var hasImplicitTransaction: Bool { scopes.first?.isImplicit ?? false }
    /// Layers waiting for layout or display (incl. ones queued for the next commit).
    public var pendingLayerCount: Int { queue.count }

    // MARK: - Host entry points

    /// Commits the implicit transaction if there is one; otherwise returns without any callout.
    /// Call it from the loop's BeforeWaiting|Exit observer (order 2000000).
    ///
    /// Skipped while an explicit transaction is open (its outermost `commit()` commits) and while
    /// a commit is already running on this thread.
    ///
    /// ```swift
    /// pipeline.commitIfNeeded(reason: .beforeWaiting)
    /// ```
    public func commitIfNeeded(reason: CommitReason) {
        guard needsCommit else { return }                 // the idle path: one load, one branch
        guard explicitDepth == 0, phase == .idle else { return }
        performCommit(reason: reason)
    }

    /// Forces a commit when pending work has waited at least `tooLateBudget` since
    /// `pendingSince` (UIKit's `_UIApplicationFlushRunLoopCATransactionIfTooLate`, for a loop kept
    /// busy by source0 work that never reaches BeforeWaiting). Returns whether it committed.
    ///
    /// ```swift
    /// // after each source0 callout:
    /// pipeline.flushIfTooLate()
    /// ```
    @discardableResult
    public func flushIfTooLate() -> Bool {
        guard needsCommit else { return false }
        return flushIfTooLate(now: clock.now)
    }

    /// `flushIfTooLate()` with the current time supplied by the caller.
    @discardableResult
    public func flushIfTooLate(now: LoopInstant) -> Bool {
        guard needsCommit, explicitDepth == 0, phase == .idle, let since = pendingSince else { return false }
        guard now >= since, since.duration(to: now) >= tooLateBudget else { return false }
        performCommit(reason: .tooLate)
        return true
    }

    /// Runs completion blocks whose animations have finished, when the default
    /// `ClockCompletionScheduler` is installed. Returns how many ran.
    @discardableResult
    public func runDueCompletions() -> Int {
        (completionScheduler as? ClockCompletionScheduler)?.runDue() ?? 0
    }

    // MARK: - Hooks

    /// Registers work that runs at the start of every commit (not on idle turns), in registration
    /// order. Marks made by it belong to that commit.
    ///
    /// ```swift
    /// pipeline.addBeforeCommitHook { model.applyPendingChanges() }
    /// ```
    @discardableResult
    public func addBeforeCommitHook(_ hook: @escaping () -> Void) -> HookToken {
        let token = makeToken()
        beforeHooks.append((token, hook))
        return token
    }

    /// Registers work that runs after every commit's snapshot was delivered, in registration order.
    ///
    /// ```swift
    /// pipeline.addAfterCommitHook { snapshot in metrics.record(snapshot.frameNumber) }
    /// ```
    @discardableResult
    public func addAfterCommitHook(_ hook: @escaping (CommitSnapshot) -> Void) -> HookToken {
        let token = makeToken()
        afterHooks.append((token, hook))
        return token
    }

    /// Removes a before- or after-commit hook. Removing an unknown token does nothing.
    public func removeHook(_ token: HookToken) {
        beforeHooks.removeAll { $0.token == token }
        afterHooks.removeAll { $0.token == token }
    }

    /// Registers a one-shot callback for after the next commit (after the after-commit hooks,
    /// before completion blocks).
    ///
    /// - Registered before or during a commit's layout/display: runs after *that* commit.
    /// - Registered from inside a post-commit callback: runs after the *next* commit.
    /// - Does not by itself cause a commit.
    /// - `runLevel` (default: the pipeline's current `runLevel`): the callback runs only at a
    ///   commit whose `runLevel` is ≤ this value, so a commit at a nested run's Exit does not run
    ///   cleanup registered by the outer level; it stays queued, in order, for a later commit.
    ///
    /// ```swift
    /// pipeline.addPostCommitCallback { closeTemporaryFiles() }
    /// ```
    public func addPostCommitCallback(runLevel: Int? = nil, _ callback: @escaping () -> Void) {
        postCommitCallbacks.append((runLevel ?? self.runLevel, callback))
    }

    /// Post-commit callbacks waiting for a commit.
    public var pendingPostCommitCallbackCount: Int { postCommitCallbacks.count }

    private func makeToken() -> HookToken {
        nextHookID += 1
        return HookToken(id: nextHookID)
    }

    // MARK: - Marks (called by Layer)

    func layerDidRequestLayout(_ layer: Layer) {
        if layer.queuedPhases == 0 { queuedLayers.append(layer) }
        queue.enqueue(LayerRef(layer), phase: Self.layoutPhase, depth: layer.depth)
        noteTransactionUse()
    }

    func layerDidRequestDisplay(_ layer: Layer) {
        if layer.queuedPhases == 0 { queuedLayers.append(layer) }
        queue.enqueue(LayerRef(layer), phase: Self.displayPhase, depth: layer.depth)
        noteTransactionUse()
    }

    /// A mark or a transaction property use: make sure a transaction will carry it.
    /// Outside a commit: the innermost open transaction carries it, or a new implicit one.
    /// During before-commit hooks and layout: the running commit carries marks.
    /// From display on: a new implicit transaction carries it to the next commit, and the host
    /// is asked to wake up.
    @inline(__always)
    func noteTransactionUse() {
        if phase == .idle {
            if scopes.isEmpty { openImplicit() }
        } else if phase >= .display {
            openImplicitForNextCommit()
        }
    }

    func openImplicit() {
        scopes.append(TransactionScope(isImplicit: true))
        needsCommit = true
        if pendingSince == nil, phase == .idle { pendingSince = clock.now }
    }

    func openImplicitForNextCommit() {
        guard scopes.isEmpty else { return }
        openImplicit()
        if !wokeDuringThisCommit {
            wokeDuringThisCommit = true
            wakeUpHandler?()
        }
    }

    func willLayOut(_ layer: Layer) {
        if phase != .idle { laidOutRecord.append(LayerIdentity(layer)) }
    }

    func willDisplay(_ layer: Layer, dirtyRect: LayerRect) {
        if phase != .idle { displayedRecord.append(DisplayedLayer(layer: LayerIdentity(layer), dirtyRect: dirtyRect)) }
    }

    // MARK: - The commit

    func performCommit(reason: CommitReason) {
        precondition(phase == .idle, "CommitPipeline: commits do not nest")
        let startTime = clock.now
        wokeDuringThisCommit = false
        if hasImplicitTransaction {
            // The implicit scope is at the bottom of the stack, usually alone: popLast is far
            // cheaper than removeFirst's general range replacement.
            let implicit = scopes.count == 1 ? scopes.removeLast() : scopes.removeFirst()
            retire(implicit)
        }
        needsCommit = false
        pendingSince = nil
        flushRequested = false

        phase = .beforeCommitHooks
        // Guarded: iterating even an empty array retains and releases it.
        if !beforeHooks.isEmpty { for entry in beforeHooks { entry.hook() } }

        queue.beginDrain()
        phase = .layout
        // Guaranteed (+0) references: `queuedLayers` keeps every queued layer alive until after
        // `endDrain()`, so the callouts need no retain/release of their layer.
        let layoutReport = queue.runPhase(Self.layoutPhase) { _, ref in
            _ = ref.raw._withUnsafeGuaranteedRef { $0.performLayoutIfNeeded(in: self) }
        }
        var deferred: [LayerIdentity] = []
        phase = .display
        if !layoutReport.leftover.isEmpty {
            deferred = layoutReport.leftover.map { LayerIdentity($0.layer) }
            reportLayoutLoop(rounds: layoutReport.rounds, layers: deferred)
            openImplicitForNextCommit()
        }
        queue.runPhase(Self.displayPhase) { _, ref in
            _ = ref.raw._withUnsafeGuaranteedRef { $0.performDisplayIfNeeded(in: self) }
        }
        queue.endDrain()
        // Layers that left every phase are no longer the pipeline's to keep alive.
        queuedLayers.removeAll { $0.queuedPhases == 0 }

        phase = .prepare
        frameNumber += 1
        // The records move into the snapshot; records made from here on (say, a layoutIfNeeded in
        // an after-commit hook) start the next commit's, in last commit's emptied buffers.
        // Only swaps: each buffer changes hands by a move, never by a copy (retain + release).
        var laidOut: [LayerIdentity] = []
        var displayed: [DisplayedLayer] = []
        swap(&laidOut, &laidOutRecord)
        swap(&displayed, &displayedRecord)
        swap(&laidOutRecord, &spareLaidOutRecord)
        swap(&displayedRecord, &spareDisplayedRecord)
        deliverSnapshot(reason: reason, laidOut: laidOut, displayed: displayed, deferred: deferred, startTime: startTime)
        // The snapshot is gone unless the sink kept it: then emptying allocates a fresh buffer, as
        // it always did; otherwise the buffers are reused without a malloc.
        laidOut.removeAll(keepingCapacity: true)
        displayed.removeAll(keepingCapacity: true)
        swap(&laidOut, &spareLaidOutRecord)
        swap(&displayed, &spareDisplayedRecord)

        phase = .completions
        runCompletions()

        phase = .idle
        let end = clock.now
        lastCommitTime = end
        if needsCommit, pendingSince == nil { pendingSince = end }
    }

    /// Steps 4 to 6 of a commit. A function of its own so that the snapshot (and its share of
    /// the record buffers) is released when it returns.
    private func deliverSnapshot(reason: CommitReason, laidOut: [LayerIdentity], displayed: [DisplayedLayer],
                                 deferred: [LayerIdentity], startTime: LoopInstant) {
        let snapshot = CommitSnapshot(frameNumber: frameNumber, reason: reason, laidOut: laidOut,
                                      displayed: displayed, layoutDeferred: deferred, startTime: startTime)
        phase = .deliver
        sink.deliver(snapshot)

        phase = .afterCommitHooks
        if !afterHooks.isEmpty { for entry in afterHooks { entry.hook(snapshot) } }
        runPostCommitCallbacks()
    }

    /// Moves a popped transaction's completion block to the commit that will carry it.
    func retire(_ scope: TransactionScope) {
        guard let block = scope.completion else { return }
        pendingCompletions.append(PendingCompletion(block: block, longestAnimation: scope.longestAnimation,
                                                    animationCount: scope.animationCount))
    }

    private func runPostCommitCallbacks() {
        guard !postCommitCallbacks.isEmpty else { return }
        let due = postCommitCallbacks
        postCommitCallbacks.removeAll()
        var kept: [(level: Int, callback: () -> Void)] = []
        for entry in due {
            if runLevel <= entry.level { entry.callback() } else { kept.append(entry) }
        }
        // Kept ones stay ahead of callbacks registered while these ran.
        postCommitCallbacks = kept + postCommitCallbacks
    }

    private func runCompletions() {
        guard !pendingCompletions.isEmpty else { return }
        swap(&pendingCompletions, &completionScratch)
        for pending in completionScratch {
            if pending.animationCount == 0 {
                pending.block(.committedWithoutAnimations)
            } else {
                let block = pending.block
                completionScheduler.schedule(after: pending.longestAnimation) { block(.animationsFinished) }
            }
        }
        completionScratch.removeAll(keepingCapacity: true)
    }

    // MARK: - Thread exit

    /// Called by the thread-exit destructor: warns about an uncommitted transaction, then drops
    /// everything the pipeline holds (layers, closures) so nothing outlives the thread.
    func threadWillExit() {
        if !scopes.isEmpty { reportThreadExitedUncommitted() }
        scopes.removeAll()
        explicitDepth = 0
        needsCommit = false
        pendingSince = nil
        queue.removeAll()
        queuedLayers.removeAll()
        pendingCompletions.removeAll()
        beforeHooks.removeAll()
        afterHooks.removeAll()
        postCommitCallbacks.removeAll()
        (completionScheduler as? ClockCompletionScheduler)?.cancelAll()
        completionScheduler = ClockCompletionScheduler(clock: clock)
        wakeUpHandler = nil
        sink = FrameLog(capacity: 1)
    }
}
