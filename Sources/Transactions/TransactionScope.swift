/// One open transaction (implicit or explicit) on a pipeline's stack.
struct TransactionScope {
    let isImplicit: Bool
    var animationDuration: Double?
    var disableActions: Bool?
    /// Allocated on the first arbitrary key, so a begin/commit pair allocates nothing.
    var values: [String: Any]?
    var completion: TransactionCompletion?
    /// Longest animation added to this group (incl. nested groups), seconds.
    var longestAnimation: Double = 0
    var animationCount = 0

    init(isImplicit: Bool) { self.isImplicit = isImplicit }
}

/// A completion whose transaction has been popped, waiting for the commit that carries it.
struct PendingCompletion {
    let block: TransactionCompletion
    let longestAnimation: Double
    let animationCount: Int
}
