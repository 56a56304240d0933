/// One open transaction (implicit or explicit) on a pipeline's stack.
struct TransactionScope {
    let isImplicit: Bool
    var animationDuration: Duration?
    var disableActions: Bool?
    /// Allocated on the first arbitrary key, so a begin/commit pair allocates nothing.
    var values: [String: Any]?
    var completion: TransactionCompletion?
    /// Longest animation added to this group (incl. nested groups), seconds.
    var longestAnimation: Duration = .zero
    var animationCount = 0

    init(isImplicit: Bool) { self.isImplicit = isImplicit }

    /// Counts an animation of `duration` in this group.
    mutating func countAnimation(_ duration: Duration) {
        animationCount += 1
        longestAnimation = Swift.max(longestAnimation, duration)
    }
}

/// A completion whose transaction has been popped, waiting for the commit that carries it.
struct PendingCompletion {
    let block: TransactionCompletion
    let longestAnimation: Duration
    let animationCount: Int
}
