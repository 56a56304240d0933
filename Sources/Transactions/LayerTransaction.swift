/// Core Animation's `CATransaction` for this thread: every call forwards to
/// `CommitPipeline.current`.
///
/// - The first mark (`Layer.setNeedsLayout/Display`) — or the first property set — opens the
///   thread's **implicit** transaction; the run loop's commit (or `flush()`) commits it.
/// - `begin()`/`commit()` nest; only the outermost `commit()` commits, and only when no implicit
///   transaction lies beneath it.
/// - Properties have nested scope: reading finds the innermost transaction that set the key,
///   setting always sets it in the innermost one.
///
/// ```swift
/// LayerTransaction.begin()
/// try LayerTransaction.setAnimationDuration(.seconds(1))
/// LayerTransaction.setCompletionBlock { reason in print("done:", reason) }
/// layer.setNeedsDisplay()
/// LayerTransaction.addAnimation()          // waits 1 s after the commit
/// try LayerTransaction.commit()            // commits now: layout, display, snapshot, hooks
/// ```
public enum LayerTransaction {
    /// Well-known keys for `value(forKey:)` / `setValue(_:forKey:)`.
    public enum Key {
        public static let animationDuration = "animationDuration"
        public static let disableActions = "disableActions"
    }

    /// Opens an explicit transaction nested in the current one.
    public static func begin() { CommitPipeline.current.begin() }

    /// Closes the innermost explicit transaction; the outermost one commits.
    /// - Throws: `TransactionError.commitWithoutBegin` when no `begin()` is open on this thread.
    public static func commit() throws(TransactionError) { try CommitPipeline.current.commit() }

    /// Commits the implicit transaction now, or at the outermost explicit `commit()` if one is open.
    public static func flush() { CommitPipeline.current.flush() }

    /// Innermost value for `key`, nil if no open transaction set it.
    public static func value(forKey key: String) -> Any? { CommitPipeline.current.value(forKey: key) }

    /// Sets `key` in the innermost transaction (opening the implicit one if needed).
    /// - Throws: `TransactionError.invalidValue` or `.negativeDuration` for a typed key given a
    ///   value it cannot hold (see `CommitPipeline.setValue(_:forKey:)`).
    public static func setValue(_ value: Any?, forKey key: String) throws(TransactionError) {
        try CommitPipeline.current.setValue(value, forKey: key)
    }

    /// Innermost animation duration; 0.25 s when unset.
    public static var animationDuration: Duration { CommitPipeline.current.animationDuration }

    /// Sets the innermost transaction's animation duration.
    /// - Throws: `TransactionError.negativeDuration` for a negative duration (nothing changes).
    public static func setAnimationDuration(_ duration: Duration) throws(TransactionError) {
        try CommitPipeline.current.setAnimationDuration(duration)
    }

    /// Innermost "disable actions" flag; false when unset. Read by code that would add implicit
    /// animations (the library adds none by itself).
    public static var disableActions: Bool {
        get { CommitPipeline.current.disableActions }
        set { CommitPipeline.current.disableActions = newValue }
    }

    /// Sets the completion block of the innermost transaction; a replaced block is called
    /// immediately with `.replaced`.
    public static func setCompletionBlock(_ block: TransactionCompletion?) {
        CommitPipeline.current.setCompletionBlock(block)
    }

    /// Records an animation of the innermost `animationDuration` in the innermost transaction.
    public static func addAnimation() { CommitPipeline.current.addAnimation() }

    /// Records an animation of `duration` in the innermost transaction.
    /// - Throws: `TransactionError.negativeDuration` for a negative duration (nothing recorded).
    public static func addAnimation(duration: Duration) throws(TransactionError) {
        try CommitPipeline.current.addAnimation(duration: duration)
    }
}
