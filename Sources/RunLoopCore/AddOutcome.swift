import RunLoopDiagnostics
extension Loop {
    /// What `add(_:mode:)` did with an item.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// let source = LoopSource(label: "input") {}
    /// print(loop.add(source, mode: .default))   // added
    /// print(loop.add(source, mode: .default))   // alreadyPresent
    /// ```
    public enum AddOutcome: Equatable, Sendable, CustomStringConvertible {
        /// The item joined the mode (for `.common`: at least one common mode, or the common items).
        case added
        /// Every mode named already held the item; nothing changed.
        case alreadyPresent
        /// The item was not added (or, for `.common`, not to every common mode); the reason was
        /// also reported as a `Diagnostic` with id `DiagnosticID.addRefused`.
        case refused(AddRefusal)

        public var description: String {
            switch self {
            case .added: "added"
            case .alreadyPresent: "alreadyPresent"
            case .refused(let reason): "refused: \(reason)"
            }
        }

        /// Folds the outcome of one more mode into this one: a refusal wins, then `added`.
        func merged(with other: AddOutcome) -> AddOutcome {
            switch (self, other) {
            case (.refused, _): self
            case (_, .refused): other
            case (.added, _), (_, .added): .added
            default: .alreadyPresent
            }
        }
    }

    /// Why an item was not added.
    public enum AddRefusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// The item was invalidated; CF ignores such adds too (O2, S6, T7).
        case invalidated
        /// Observers, timers, ports and fd sources belong to one loop (O2, T2); this one already
        /// belongs to another.
        case belongsToAnotherLoop
        /// The loop's thread has exited (W6).
        case loopTornDown
        /// The kernel refused the descriptor: for example a second fd source on the same fd in
        /// one mode (EEXIST), a regular file (EPERM) or a closed fd (EBADF).
        case systemCall(SystemCallError)

        public var description: String {
            switch self {
            case .invalidated: "the item was invalidated"
            case .belongsToAnotherLoop: "the item already belongs to another loop"
            case .loopTornDown: "the loop's thread has exited"
            case .systemCall(let failure): "\(failure)"
            }
        }
    }
}
