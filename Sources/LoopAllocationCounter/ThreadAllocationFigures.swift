import CAllocationCounter

/// One bucket's running totals on one thread (see ``ThreadAllocationFigures``).
public struct AllocationTotals: Sendable, Equatable {
    public var allocations: UInt64
    public var frees: UInt64
    /// Usable bytes (`malloc_usable_size`) of the blocks allocated.
    public var allocatedBytes: UInt64
    /// Usable bytes of the blocks freed.
    public var freedBytes: UInt64
    /// Bytes asked for.
    public var requestedBytes: UInt64
    /// `allocatedBytes - freedBytes`.
    public var liveBytes: Int64
    /// The highest `liveBytes` since the thread's peak was last reset.
    public var peakLiveBytes: Int64

    init(_ raw: rlk_alloc_counts) {
        allocations = raw.allocations
        frees = raw.frees
        allocatedBytes = raw.allocated_bytes
        freedBytes = raw.freed_bytes
        requestedBytes = raw.requested_bytes
        liveBytes = raw.live_bytes
        peakLiveBytes = raw.peak_live_bytes
    }

    /// The figures from `start` to these totals, with `peak` from `highestLive` (the highest
    /// live bytes seen in between) or, when nil, from the thread's peak since the last reset
    /// (``AllocationCounter/beginSpan()`` resets it).
    ///
    /// ```swift
    /// let before = AllocationCounter.beginSpan().user
    /// let figures = AllocationCounter.currentThread().user.since(before)
    /// ```
    public func since(_ start: AllocationTotals, highestLive: Int64? = nil) -> AllocationFigures {
        AllocationFigures(
            allocations: allocations &- start.allocations, frees: frees &- start.frees,
            bytes: allocatedBytes &- start.allocatedBytes, freedBytes: freedBytes &- start.freedBytes,
            requestedBytes: requestedBytes &- start.requestedBytes,
            net: liveBytes &- start.liveBytes,
            peak: max(0, (highestLive ?? max(peakLiveBytes, liveBytes)) &- start.liveBytes))
    }
}

/// The calling thread's three buckets: what the program allocated, the autorelease pool's
/// pages, and the instruments' own bookkeeping.
public struct ThreadAllocationFigures: Sendable, Equatable {
    public var user: AllocationTotals
    public var poolPages: AllocationTotals
    public var ignored: AllocationTotals
    /// Samples taken in sampling mode (each stands for the sampling interval in bytes).
    public var samples: UInt64

    init(raw: rlk_alloc_thread_figures) {
        user = AllocationTotals(raw.bucket.0)
        poolPages = AllocationTotals(raw.bucket.1)
        ignored = AllocationTotals(raw.bucket.2)
        samples = raw.samples
    }
}

/// What happened to memory within one span (a callout, a layer's layout, a turn).
///
/// Bytes are usable sizes, so a block's allocation and free cancel exactly; glibc rounds a
/// request of `n` bytes up to `max(24, (n + 8 + 15) & ~15) - 8` usable bytes (x86-64).
public struct AllocationFigures: Sendable, Equatable {
    public var allocations: UInt64
    public var frees: UInt64
    /// Usable bytes allocated.
    public var bytes: UInt64
    /// Usable bytes freed (blocks allocated anywhere, freed here).
    public var freedBytes: UInt64
    /// Bytes asked for.
    public var requestedBytes: UInt64
    /// `bytes - freedBytes`: what the span left live.
    public var net: Int64
    /// The highest live bytes during the span, above the live bytes at its start.
    public var peak: Int64

    public init(allocations: UInt64 = 0, frees: UInt64 = 0, bytes: UInt64 = 0, freedBytes: UInt64 = 0,
                requestedBytes: UInt64 = 0, net: Int64 = 0, peak: Int64 = 0) {
        self.allocations = allocations
        self.frees = frees
        self.bytes = bytes
        self.freedBytes = freedBytes
        self.requestedBytes = requestedBytes
        self.net = net
        self.peak = peak
    }

    /// No allocation and no free.
    public static let zero = AllocationFigures()

    /// Sums two spans; the peak is the larger one (spans side by side, not nested).
    public static func + (lhs: AllocationFigures, rhs: AllocationFigures) -> AllocationFigures {
        AllocationFigures(allocations: lhs.allocations + rhs.allocations, frees: lhs.frees + rhs.frees,
                          bytes: lhs.bytes + rhs.bytes, freedBytes: lhs.freedBytes + rhs.freedBytes,
                          requestedBytes: lhs.requestedBytes + rhs.requestedBytes, net: lhs.net + rhs.net,
                          peak: max(lhs.peak, rhs.peak))
    }
}
