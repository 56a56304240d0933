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

/// Queue key for a layer: its identity, without reference counting, so queue entries copy, sort
/// and pass through closures for free. The pipeline keeps every queued layer alive with one
/// strong reference in `CommitPipeline.queuedLayers` (Core Animation's transaction likewise
/// retains the layers it touched) until the layer has left every phase.
struct LayerRef: Hashable {
    let raw: Unmanaged<Layer>
    init(_ layer: Layer) { raw = Unmanaged.passUnretained(layer) }
    /// Valid while the layer is queued (the pipeline holds it).
    var layer: Layer { raw.takeUnretainedValue() }
    static func == (a: LayerRef, b: LayerRef) -> Bool { a.raw.toOpaque() == b.raw.toOpaque() }
    func hash(into hasher: inout Hasher) { hasher.combine(raw.toOpaque()) }
}

/// The pipeline queue's per-phase membership: a bit in `Layer.queuedPhases` (see
/// `PhasedQueue.keysAreLayers`).
extension LayerRef {
    @inline(__always) func hasPhaseBit(_ phase: Int) -> Bool {
        raw._withUnsafeGuaranteedRef { $0.queuedPhases & (1 << phase) != 0 }
    }
    @inline(__always) func setPhaseBit(_ phase: Int) {
        raw._withUnsafeGuaranteedRef { $0.queuedPhases |= (1 << phase) }
    }
    @inline(__always) func clearPhaseBit(_ phase: Int) {
        raw._withUnsafeGuaranteedRef { $0.queuedPhases &= ~(1 << phase) }
    }
}
