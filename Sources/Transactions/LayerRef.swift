/// Queue key for a layer: its identity, without reference counting, so queue entries copy, sort
/// and pass through closures for free. The pipeline keeps every queued layer alive with one
/// strong reference in `CommitPipeline.queuedLayers` (Core Animation's transaction likewise
/// retains the layers it touched) until the layer has left every phase.
struct LayerRef: PhasedQueueKey {
    typealias Membership = LayerPhaseBits

    let raw: Unmanaged<Layer>
    init(_ layer: Layer) { raw = Unmanaged.passUnretained(layer) }
    /// Valid while the layer is queued (the pipeline holds it).
    var layer: Layer { raw.takeUnretainedValue() }
    static func == (a: LayerRef, b: LayerRef) -> Bool { a.raw.toOpaque() == b.raw.toOpaque() }
    func hash(into hasher: inout Hasher) { hasher.combine(raw.toOpaque()) }
}

/// The pipeline queue's membership: a bit per phase in `Layer.queuedPhases`, so a mark and a
/// commit test and flip one bit of the layer instead of hashing it. Holds no state of its own.
/// Each method borrows the layer (+0): the queue asks only about a layer being marked (its caller
/// holds it) or queued (`CommitPipeline` holds it).
struct LayerPhaseBits: PhaseMembership {
    init() {}

    @inline(__always) func contains(_ key: LayerRef, phase: Int) -> Bool {
        key.raw._withUnsafeGuaranteedRef { $0.queuedPhases & (1 << phase) != 0 }
    }

    @inline(__always) mutating func insert(_ key: LayerRef, phase: Int) -> Bool {
        key.raw._withUnsafeGuaranteedRef { layer in
            let bit: UInt8 = 1 << phase
            if layer.queuedPhases & bit != 0 { return false }
            layer.queuedPhases |= bit
            return true
        }
    }

    @inline(__always) mutating func remove(_ key: LayerRef, phase: Int) -> Bool {
        key.raw._withUnsafeGuaranteedRef { layer in
            let bit: UInt8 = 1 << phase
            if layer.queuedPhases & bit == 0 { return false }
            layer.queuedPhases &= ~bit
            return true
        }
    }
}
