import Autorelease

extension PoolSnapshot {
    /// The calling thread's autorelease pool statistics.
    ///
    /// ```swift
    /// let probe = MemoryProbe(poolStatistics: PoolSnapshot.currentThread)
    /// ```
    public static func currentThread() -> PoolSnapshot {
        PoolSnapshot(AutoreleasePool.statistics)
    }

    /// Statistics summed over every thread's pool.
    ///
    /// ```swift
    /// let probe = MemoryProbe(poolStatistics: PoolSnapshot.process)
    /// ```
    public static func process() -> PoolSnapshot {
        PoolSnapshot(AutoreleasePool.processStatistics)
    }

    /// Converts the pool module's statistics.
    public init(_ statistics: AutoreleasePool.Statistics) {
        self.init(pendingEntries: statistics.pendingEntries, pages: statistics.pages, bytes: statistics.bytes,
                  peakEntries: statistics.peakEntries, peakBytes: statistics.peakBytes)
    }
}

extension PoolRecord {
    /// A record from the pool statistics read just before and just after the operation.
    ///
    /// ```swift
    /// let before = AutoreleasePool.statistics
    /// token = AutoreleasePool.popAndPush(token)
    /// recorder.record(PoolRecord(operation: .popAndPush, before: before, after: AutoreleasePool.statistics))
    /// ```
    public init(operation: Operation, before: AutoreleasePool.Statistics, after: AutoreleasePool.Statistics) {
        self.init(operation: operation, entriesBefore: before.pendingEntries, entriesAfter: after.pendingEntries,
                  pages: after.pages)
    }
}
