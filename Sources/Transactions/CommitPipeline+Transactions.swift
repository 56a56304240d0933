/// The transaction stack operations behind `LayerTransaction` (which forwards to
/// `CommitPipeline.current`).
extension CommitPipeline {
    /// Default of `animationDuration` when no open transaction set it (Core Animation's 0.25 s).
    public static let defaultAnimationDuration: Duration = .milliseconds(250)

    /// Opens an explicit transaction nested in whatever is open on this thread.
    public func begin() {
        state.scopes.append(TransactionScope(isImplicit: false))
        state.explicitDepth += 1
    }

    /// Closes the innermost explicit transaction. Only the outermost one commits — and only when
    /// no implicit transaction lies beneath it (then the run loop's commit carries everything,
    /// unless `flush()` was called inside, which commits here).
    ///
    /// - Throws: `TransactionError.commitWithoutBegin` when no explicit transaction is open.
    public func commit() throws(TransactionError) {
        guard state.explicitDepth > 0, let top = state.scopes.last, !top.isImplicit else {
            throw .commitWithoutBegin(thread: threadName, implicitOpen: hasImplicitTransaction)
        }
        state.scopes.removeLast()
        state.explicitDepth -= 1
        retire(top)
        guard state.explicitDepth == 0 else { return }
        if state.phase != .idle {
            // A transaction begun and committed inside a running commit's callouts: fold it into
            // the running commit before display, else carry it to the next commit.
            if state.phase >= .display { openImplicitForNextCommit() }
            return
        }
        if state.scopes.isEmpty {
            performCommit(reason: .explicitCommit)
        } else if state.flushRequested {
            performCommit(reason: .flush)
        }
    }

    /// Commits the implicit transaction now; when an explicit transaction is open, at its
    /// outermost `commit()` instead. Does nothing when nothing is open. During a running commit it
    /// only reports the diagnostic `commit.reentrant-commit` (the running commit, or the next
    /// one, carries the work).
    public func flush() {
        if state.phase != .idle {
            if commitNeeded || !state.scopes.isEmpty { reportReentrantCommit(reason: .flush) }
            return
        }
        if state.explicitDepth > 0 {
            state.flushRequested = true
            return
        }
        if commitNeeded { performCommit(reason: .flush) }
    }

    /// The value for `key` from the innermost open transaction that set it; nil if none did.
    /// `LayerTransaction.Key.animationDuration` and `.disableActions` read their typed storage.
    public func value(forKey key: String) -> Any? {
        for scope in state.scopes.reversed() {
            switch key {
            case LayerTransaction.Key.animationDuration:
                if let value = scope.animationDuration { return value }
            case LayerTransaction.Key.disableActions:
                if let value = scope.disableActions { return value }
            default:
                if let value = scope.values?[key] { return value }
            }
        }
        return nil
    }

    /// Sets `key` in the innermost open transaction (opening the implicit one if none is open).
    /// Setting nil removes it from that transaction only.
    ///
    /// - Throws: `TransactionError.invalidValue` when a typed key gets a value of another type
    ///   (`animationDuration` takes a `Duration`, `disableActions` a `Bool`), and
    ///   `.negativeDuration` for a negative animation duration; nothing is changed then.
    public func setValue(_ value: Any?, forKey key: String) throws(TransactionError) {
        switch key {
        case LayerTransaction.Key.animationDuration:
            let duration: Duration? = try typedValue(value, forKey: key)
            if let duration { try Self.checkNotNegative(duration, what: "animationDuration") }
            withInnermostScope { $0.animationDuration = duration }
        case LayerTransaction.Key.disableActions:
            let flag: Bool? = try typedValue(value, forKey: key)
            withInnermostScope { $0.disableActions = flag }
        default:
            withInnermostScope { scope in
                if let value {
                    if scope.values == nil { scope.values = [:] }
                    scope.values![key] = value
                } else {
                    scope.values?[key] = nil
                }
            }
        }
    }

    /// Innermost `animationDuration`, default 0.25 s (``defaultAnimationDuration``).
    public var animationDuration: Duration {
        for scope in state.scopes.reversed() { if let value = scope.animationDuration { return value } }
        return Self.defaultAnimationDuration
    }

    /// Sets `animationDuration` in the innermost transaction, as `CATransaction`'s
    /// `setAnimationDuration` does.
    ///
    /// - Throws: `TransactionError.negativeDuration` for a negative duration (nothing changes).
    public func setAnimationDuration(_ duration: Duration) throws(TransactionError) {
        try Self.checkNotNegative(duration, what: "setAnimationDuration")
        withInnermostScope { $0.animationDuration = duration }
    }

    /// Innermost `disableActions`, default false.
    public var disableActions: Bool {
        get {
            for scope in state.scopes.reversed() { if let value = scope.disableActions { return value } }
            return false
        }
        set { withInnermostScope { $0.disableActions = newValue } }
    }

    /// Sets the innermost transaction's completion block. A block it replaces is called at once,
    /// before this returns, with `.replaced`.
    public func setCompletionBlock(_ block: TransactionCompletion?) {
        var replaced: TransactionCompletion?
        withInnermostScope { scope in
            replaced = scope.completion
            scope.completion = block
        }
        replaced?(.replaced)
    }

    /// Records an animation of the innermost `animationDuration` in the innermost transaction.
    /// It counts toward the completion block of that transaction and of every enclosing one:
    /// each waits for the longest animation of its group.
    public func addAnimation() {
        recordAnimation(animationDuration)
    }

    /// Records an animation of `duration` in the innermost transaction (see ``addAnimation()``).
    ///
    /// - Throws: `TransactionError.negativeDuration` for a negative duration (nothing recorded).
    public func addAnimation(duration: Duration) throws(TransactionError) {
        try Self.checkNotNegative(duration, what: "addAnimation(duration:)")
        recordAnimation(duration)
    }

    private func recordAnimation(_ duration: Duration) {
        withInnermostScope { _ in }
        for index in state.scopes.indices { state.scopes[index].countAnimation(duration) }
    }

    /// Applies `change` to the innermost open transaction, opening one first if needed (the
    /// implicit one outside a commit; a next-commit implicit one during a commit).
    private func withInnermostScope(_ change: (inout TransactionScope) -> Void) {
        if state.scopes.isEmpty {
            if state.phase == .idle { openImplicit() } else { openImplicitForNextCommit() }
        }
        change(&state.scopes[state.scopes.count - 1])
    }

    private static func checkNotNegative(_ duration: Duration, what: String) throws(TransactionError) {
        guard duration >= .zero else { throw .negativeDuration(duration, what: what) }
    }

    /// `value` as the type a typed key stores; nil stays nil (it removes the key).
    private func typedValue<Value>(_ value: Any?, forKey key: String) throws(TransactionError) -> Value? {
        guard let value else { return nil }
        guard let typed = value as? Value else {
            throw .invalidValue(key: key, expected: "\(Value.self)", got: "\(type(of: value))")
        }
        return typed
    }
}
