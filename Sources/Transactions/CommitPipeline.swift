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

    /// Time source for `flushIfTooLate` and the default completion scheduler.
    public let clock: any TransactionClock
    /// Rounds of layout per commit before giving up (default 4, as GTK's frame clock).
    public let maxLayoutRounds: Int
    /// The thread this pipeline belongs to (for messages).
    public let threadName: String
    let queue: PhasedQueue<LayerRef>
    /// Everything that changes, behind one pointer (see `ConfinedState`).
    let state: ConfinedState<PipelineState>

    /// Called when work was queued for the next commit *during* a commit (marks made in display
    /// or later, or layout left over by the round cap), so a host loop about to sleep turns once
    /// more. The umbrella sets it to the loop's `wakeUp()`.
    public var wakeUpHandler: (() -> Void)? {
        get { state.wakeUp.call }
        set { state.wakeUp.call = newValue }
    }
    /// Receives each commit's snapshot. Default: a `FrameLog` (also reachable as `frameLog`).
    public var sink: any CommitSink {
        get { state.sink }
        set { state.sink = newValue }
    }
    /// Runs completion blocks that wait for animations. Default: a `ClockCompletionScheduler` on
    /// `clock`, pumped by `runDueCompletions()`.
    public var completionScheduler: any CompletionScheduler {
        get { state.completionScheduler }
        set { state.completionScheduler = newValue }
    }
    /// How long pending work may wait before `flushIfTooLate()` forces a commit.
    /// Default ``defaultTooLateBudget``, one 60 Hz frame; set with ``setTooLateBudget(_:)``.
    public var tooLateBudget: Duration { state.tooLateBudget }
    /// One 60 Hz frame: 16 666 667 ns.
    public static let defaultTooLateBudget: Duration = .nanoseconds(16_666_667)

    /// Sets ``tooLateBudget``.
    /// - Throws: `TransactionError.negativeDuration` for a negative budget (nothing changes).
    public func setTooLateBudget(_ budget: Duration) throws(TransactionError) {
        guard budget >= .zero else { throw .negativeDuration(budget, what: "setTooLateBudget") }
        state.tooLateBudget = budget
    }
    /// The host loop's nesting level (0 = no loop running). The umbrella raises it on a run's Entry
    /// and lowers it after that run's Exit commit. Post-commit callbacks remember the level they
    /// were registered at and run only at a commit whose level is not deeper (see
    /// `addPostCommitCallback(runLevel:_:)`).
    public var runLevel: Int {
        get { state.runLevel }
        set { state.runLevel = newValue }
    }

    // MARK: State

    /// True when a commit would do something: an implicit transaction is open (a mark was made,
    /// or work was left for the next commit). Cheap: one stored Bool.
    public var needsCommit: Bool { commitNeeded }
    /// `needsCommit`, kept beside `state` rather than in it, so the idle check is one load. Not
    /// public, so the optimiser sees every access, finds none overlapping, and drops Swift's
    /// run-time exclusivity check.
    private(set) var commitNeeded = false
    /// The current commit step (`.idle` outside a commit).
    public var phase: Phase { state.phase }
    /// Number of commits so far (the last snapshot's `frameNumber`).
    public var frameNumber: UInt64 { state.frameNumber }
    /// When the work now waiting for a commit started waiting, on `clock`: the time of the mark
    /// (or other transaction use) that opened the implicit transaction; for work queued during a
    /// commit (marks in display or later, layout left over by the cap) the time that commit
    /// finished. nil when nothing waits. `flushIfTooLate()` compares against it.
    public var pendingSince: LoopInstant? { state.pendingSince }
    /// When the last commit finished, on `clock`.
    public var lastCommitTime: LoopInstant? { state.lastCommitTime }

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
        state = ConfinedState(PipelineState(sink: FrameLog(), completionScheduler: ClockCompletionScheduler(clock: clock)))
        self.threadName = currentThreadDescription()
        // Membership lives in a bit per phase on the layer (`LayerRef.Membership`): no hashing
        // and no closure call on the mark path.
        queue = PhasedQueue(
            phases: [
                // Live depth: a layer may have moved between its mark and the commit. The ranks
                // borrow the layer (+0): a queued layer is kept alive by `queuedLayers`.
                .init("layout", reentrancy: .nextRound(maxRounds: maxLayoutRounds),
                      order: .rank { ref in ref.raw._withUnsafeGuaranteedRef { $0.depth } }),
                .init("display", reentrancy: .nextDrain,
                      order: .rank { ref in ref.raw._withUnsafeGuaranteedRef { $0.treeOrderRank } }),
            ])
    }

    /// The default sink, when it is still installed.
    public var frameLog: FrameLog? { sink as? FrameLog }

    /// True while a commit runs.
    public var isCommitting: Bool { state.phase != .idle }
    /// Explicit `begin()`s not yet committed.
    public var explicitTransactionDepth: Int { state.explicitDepth }
    /// True when the implicit transaction is open.
    public var hasImplicitTransaction: Bool { state.scopes.first?.isImplicit ?? false }
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
        guard commitNeeded else { return }                // the idle path: one load, one branch
        guard state.explicitDepth == 0, state.phase == .idle else { return }
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
        guard commitNeeded else { return false }
        return flushIfTooLate(now: clock.now)
    }

    /// `flushIfTooLate()` with the current time supplied by the caller.
    @discardableResult
    public func flushIfTooLate(now: LoopInstant) -> Bool {
        guard commitNeeded, state.explicitDepth == 0, state.phase == .idle,
              let since = state.pendingSince else { return false }
        guard now >= since, since.duration(to: now) >= state.tooLateBudget else { return false }
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
        let token = state.value.makeHookToken()
        state.beforeHooks.append((token, hook))
        return token
    }

    /// Registers work that runs after every commit's snapshot was delivered, in registration order.
    ///
    /// ```swift
    /// pipeline.addAfterCommitHook { snapshot in metrics.record(snapshot.frameNumber) }
    /// ```
    @discardableResult
    public func addAfterCommitHook(_ hook: @escaping (CommitSnapshot) -> Void) -> HookToken {
        let token = state.value.makeHookToken()
        state.afterHooks.append((token, hook))
        return token
    }

    /// Removes a before- or after-commit hook. Removing an unknown token does nothing.
    public func removeHook(_ token: HookToken) {
        state.beforeHooks.removeAll { $0.token == token }
        state.afterHooks.removeAll { $0.token == token }
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
        let level = runLevel ?? state.runLevel
        state.postCommitCallbacks.append((level, callback))
    }

    /// Post-commit callbacks waiting for a commit.
    public var pendingPostCommitCallbackCount: Int { state.postCommitCallbacks.count }

    // MARK: - Marks (called by Layer)

    func layerDidRequestLayout(_ layer: Layer) {
        if layer.queuedPhases == 0 { state.queuedLayers.append(layer) }
        queue.enqueue(LayerRef(layer), phase: Self.layoutPhase, depth: layer.depth)
        noteTransactionUse()
    }

    func layerDidRequestDisplay(_ layer: Layer) {
        if layer.queuedPhases == 0 { state.queuedLayers.append(layer) }
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
        let phase = state.phase
        if phase == .idle {
            if state.scopes.isEmpty { openImplicit() }
        } else if phase >= .display {
            openImplicitForNextCommit()
        }
    }

    func openImplicit() {
        state.scopes.append(TransactionScope(isImplicit: true))
        commitNeeded = true
        if state.pendingSince == nil, state.phase == .idle { state.pendingSince = clock.now }
    }

    func openImplicitForNextCommit() {
        guard state.scopes.isEmpty else { return }
        openImplicit()
        if !state.wokeDuringThisCommit {
            state.wokeDuringThisCommit = true
            if let wakeUp = state.wakeUp.call { wakeUp() }
        }
    }

    func willLayOut(_ layer: Layer) {
        if state.phase != .idle { state.laidOutRecord.append(LayerIdentity(layer)) }
    }

    func willDisplay(_ layer: Layer, dirtyRect: LayerRect) {
        if state.phase != .idle {
            state.displayedRecord.append(DisplayedLayer(layer: LayerIdentity(layer), dirtyRect: dirtyRect))
        }
    }

    // MARK: - The commit

    func performCommit(reason: CommitReason) {
        precondition(state.phase == .idle, "CommitPipeline: commits do not nest")
        let startTime = clock.now
        state.wokeDuringThisCommit = false
        if hasImplicitTransaction {
            // The implicit scope is at the bottom of the stack, usually alone; then `removeLast`
            // takes it without `removeFirst`'s general range replacement.
            let implicit = state.scopes.count == 1 ? state.scopes.removeLast() : state.scopes.removeFirst()
            retire(implicit)
        }
        commitNeeded = false
        state.pendingSince = nil
        state.flushRequested = false

        state.phase = .beforeCommitHooks
        // Guarded: iterating even an empty array retains and releases it.
        if !state.beforeHooks.isEmpty {
            let hooks = state.beforeHooks
            for entry in hooks { entry.hook() }
        }

        queue.beginDrain()
        state.phase = .layout
        // Guaranteed (+0) references: `queuedLayers` keeps every queued layer alive until after
        // `endDrain()`, so the callouts need no retain/release of their layer.
        let layoutReport = queue.runPhase(Self.layoutPhase) { _, ref in
            _ = ref.raw._withUnsafeGuaranteedRef { $0.performLayoutIfNeeded(in: self) }
        }
        var deferred: [LayerIdentity] = []
        state.phase = .display
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
        state.queuedLayers.removeAll { $0.queuedPhases == 0 }

        state.phase = .prepare
        state.frameNumber += 1
        // The records move into the snapshot; records made from here on (say, a layoutIfNeeded in
        // an after-commit hook) start the next commit's, in last commit's emptied buffers. Only
        // swaps: each buffer changes hands by a move, never by a copy.
        var laidOut: [LayerIdentity] = []
        var displayed: [DisplayedLayer] = []
        swap(&laidOut, &state.spareLaidOutRecord)
        swap(&displayed, &state.spareDisplayedRecord)
        swap(&laidOut, &state.laidOutRecord)
        swap(&displayed, &state.displayedRecord)
        deliverSnapshot(reason: reason, laidOut: laidOut, displayed: displayed, deferred: deferred, startTime: startTime)
        // Unless the sink kept the snapshot, the buffers are unique again and emptying them keeps
        // their memory for the next commit (a buffer a kept snapshot shares is left to it).
        laidOut.removeAll(keepingCapacity: true)
        displayed.removeAll(keepingCapacity: true)
        swap(&laidOut, &state.spareLaidOutRecord)
        swap(&displayed, &state.spareDisplayedRecord)

        state.phase = .completions
        if !state.pendingCompletions.isEmpty { runCompletions() }

        state.phase = .idle
        let end = clock.now
        state.lastCommitTime = end
        if commitNeeded, state.pendingSince == nil { state.pendingSince = end }
    }

    /// Steps 4 to 6 of a commit. A function of its own so that the snapshot (and its share of
    /// the record buffers) is released when it returns.
    private func deliverSnapshot(reason: CommitReason, laidOut: [LayerIdentity], displayed: [DisplayedLayer],
                                 deferred: [LayerIdentity], startTime: LoopInstant) {
        let snapshot = CommitSnapshot(frameNumber: state.frameNumber, reason: reason, laidOut: laidOut,
                                      displayed: displayed, layoutDeferred: deferred, startTime: startTime)
        state.phase = .deliver
        let sink = state.sink
        sink.deliver(snapshot)

        state.phase = .afterCommitHooks
        if !state.afterHooks.isEmpty {
            let hooks = state.afterHooks
            for entry in hooks { entry.hook(snapshot) }
        }
        if !state.postCommitCallbacks.isEmpty { runPostCommitCallbacks() }
    }

    /// Moves a popped transaction's completion block to the commit that will carry it.
    func retire(_ scope: TransactionScope) {
        guard let block = scope.completion else { return }
        state.pendingCompletions.append(PendingCompletion(block: block, longestAnimation: scope.longestAnimation,
                                                          animationCount: scope.animationCount))
    }

    private func runPostCommitCallbacks() {
        let due = state.postCommitCallbacks
        state.postCommitCallbacks.removeAll()
        var kept: [(level: Int, callback: () -> Void)] = []
        for entry in due {
            if state.runLevel <= entry.level { entry.callback() } else { kept.append(entry) }
        }
        // Kept ones stay ahead of callbacks registered while these ran.
        state.postCommitCallbacks = kept + state.postCommitCallbacks
    }

    private func runCompletions() {
        // Completion blocks may open transactions with completions of their own: those go to
        // `pendingCompletions`, for the next commit, while this one walks the scratch array.
        var due = state.value.takeCompletions()
        let scheduler = state.completionScheduler
        for pending in due {
            if pending.animationCount == 0 {
                pending.block(.committedWithoutAnimations)
            } else {
                let block = pending.block
                scheduler.schedule(after: pending.longestAnimation) { block(.animationsFinished) }
            }
        }
        due.removeAll(keepingCapacity: true)
        state.completionScratch = due
    }

    // MARK: - Thread exit

    /// Called by the thread-exit destructor: warns about an uncommitted transaction, then drops
    /// everything the pipeline holds (layers, closures) so nothing outlives the thread.
    func threadWillExit() {
        if !state.scopes.isEmpty { reportThreadExitedUncommitted() }
        queue.removeAll()
        (completionScheduler as? ClockCompletionScheduler)?.cancelAll()
        // What the pipeline held is released after the write, so a deinit it sets off (of a
        // closure's capture, say) finds the pipeline already clean.
        var cleared = state.value
        cleared.clearForThreadExit(clock: clock)
        commitNeeded = false
        _ = state.exchange(cleared)
    }
}
