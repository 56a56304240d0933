import RunLoopCore

/// Autorelease pool statistics at one moment, in a shape independent of the pool module.
///
/// ```swift
/// let now = PoolSnapshot.currentThread()     // this thread's pool
/// print(now.pendingEntries, now.peakEntries)
/// ```
public struct PoolSnapshot: Sendable, Equatable {
    /// Entries (objects, cleanups, boundaries) waiting for a pop.
    public var pendingEntries: Int
    /// Pages allocated.
    public var pages: Int
    /// Bytes held by those pages.
    public var bytes: Int
    /// Highest `pendingEntries` since the pool's last peak reset.
    public var peakEntries: Int
    /// Highest `bytes` since the pool's last peak reset.
    public var peakBytes: Int

    public init(pendingEntries: Int = 0, pages: Int = 0, bytes: Int = 0, peakEntries: Int = 0, peakBytes: Int = 0) {
        self.pendingEntries = pendingEntries
        self.pages = pages
        self.bytes = bytes
        self.peakEntries = peakEntries
        self.peakBytes = peakBytes
    }

    public static let zero = PoolSnapshot()
}

/// One memory measurement: pool statistics, resident set size and heap in use.
///
/// ```swift
/// let sample = probe.sample(label: "after load")
/// print(sample.residentBytes / 1_048_576, "MiB resident")
/// ```
public struct MemorySample: Sendable, Equatable {
    /// Nanoseconds on the probe's clock.
    public var time: LoopInstant
    /// The activity at which it was taken, or nil for an on-demand sample.
    public var activity: Loop.Activity?
    /// The sample's label (the activity's CF name for observer samples).
    public var label: String
    public var pool: PoolSnapshot
    /// Resident set size from /proc/self/statm (0 when unreadable).
    public var residentBytes: Int
    /// glibc heap bytes in use (mallinfo2 uordblks; 0 when unavailable).
    public var heapInUseBytes: Int

    public init(time: LoopInstant, activity: Loop.Activity? = nil, label: String, pool: PoolSnapshot,
                residentBytes: Int, heapInUseBytes: Int) {
        self.time = time
        self.activity = activity
        self.label = label
        self.pool = pool
        self.residentBytes = residentBytes
        self.heapInUseBytes = heapInUseBytes
    }
}

/// A quantity of a `MemorySample` that charts and counters can plot.
public enum MemoryMetric: String, Sendable, CaseIterable {
    case poolPendingEntries, poolPeakEntries, poolPages, poolBytes, residentBytes, heapInUseBytes

    public func value(of sample: MemorySample) -> Double {
        switch self {
        case .poolPendingEntries: Double(sample.pool.pendingEntries)
        case .poolPeakEntries: Double(sample.pool.peakEntries)
        case .poolPages: Double(sample.pool.pages)
        case .poolBytes: Double(sample.pool.bytes)
        case .residentBytes: Double(sample.residentBytes)
        case .heapInUseBytes: Double(sample.heapInUseBytes)
        }
    }

    /// Short human name for legends.
    public var title: String {
        switch self {
        case .poolPendingEntries: "pool entries"
        case .poolPeakEntries: "pool peak entries"
        case .poolPages: "pool pages"
        case .poolBytes: "pool bytes"
        case .residentBytes: "RSS"
        case .heapInUseBytes: "heap in use"
        }
    }

    /// True for byte quantities (charts show them in KiB/MiB).
    public var isBytes: Bool {
        switch self {
        case .poolBytes, .residentBytes, .heapInUseBytes: true
        default: false
        }
    }
}
