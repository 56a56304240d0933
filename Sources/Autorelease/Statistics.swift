extension AutoreleasePool {
    /// What a pool holds and has held. Per thread from `statistics`, summed over threads from
    /// `processStatistics`.
    ///
    /// ```swift
    /// let before = AutoreleasePool.statistics
    /// withAutoreleasePool { for _ in 0..<1000 { AutoreleasePool.autorelease(Node()) } }
    /// print(AutoreleasePool.statistics.peakEntries - before.peakEntries)
    /// ```
    public struct Statistics: Sendable, Equatable, CustomStringConvertible {
        /// Used slots: boundaries, objects and cleanups (a coalesced entry counts once), as
        /// objc4's "releases pending".
        public var pendingEntries: Int
        /// Releases a full drain would perform (coalesced entries count `count + 1`).
        /// Per thread only; 0 in `processStatistics`.
        public var pendingReleases: Int
        /// Pages allocated, including the cold page and a cached empty child.
        public var pages: Int
        /// `pages * 4096`.
        public var bytes: Int
        /// The most entries pending at once since the last `resetPeaks()`.
        public var peakEntries: Int
        /// The most page bytes held at once since the last `resetPeaks()`.
        public var peakBytes: Int
        /// objc4's high-water mark (`depth * 512 + used slots` of the hot page, raised only
        /// by more than 256); 0 unless `configuration.highWater` is on.
        public var highWaterMark: Int

        /// One line; "no pool" when the thread holds none, and the high-water mark only when
        /// high-water tracking recorded one.
        public var description: String {
            if pages == 0 && pendingEntries == 0 && peakEntries == 0 { return "no pool" }
            let highWater = highWaterMark > 0 ? ", pool high-water mark: \(highWaterMark) entries" : ""
            return "pending \(pendingEntries) entries (\(pendingReleases) releases), \(pages) pages (\(bytes) bytes), "
                + "peak \(peakEntries) entries / \(peakBytes) bytes" + highWater
        }
    }

    /// The calling thread's pool statistics.
    ///
    /// ```swift
    /// #expect(AutoreleasePool.statistics.pages == 0)   // a fresh thread has no page
    /// ```
    public static var statistics: Statistics {
        let word = ThreadPool.loadWord()
        let state = ThreadState.current
        state.samplePeakEntries()
        state.publish()
        let hot = ThreadPool.hotPage(word)
        return Statistics(
            pendingEntries: ThreadPool.pendingEntries(word),
            pendingReleases: ThreadPool.pendingReleases(word),
            pages: state.pages,
            bytes: state.pages * 4096,
            peakEntries: state.peakEntries,
            peakBytes: state.peakBytes,
            highWaterMark: Int(hot?.hiwat ?? 0))
    }

    /// Statistics summed over every thread. Pages, bytes and `peakBytes` (the peak of the
    /// process total) are exact; pending entries are as each thread last published them (at its
    /// pops, page changes and `statistics` queries); `peakEntries` is the sum of the threads'
    /// peaks since `resetProcessPeaks()` (exited threads included), an upper bound of the peak
    /// of the sum.
    ///
    /// ```swift
    /// print(AutoreleasePool.processStatistics.bytes)
    /// ```
    public static var processStatistics: Statistics {
        let pages = ProcessTotals.pages.load(ordering: .relaxed)
        let sums = ThreadRegistry.sums()
        return Statistics(
            pendingEntries: sums.entries,
            pendingReleases: 0,
            pages: pages,
            bytes: pages * 4096,
            peakEntries: sums.peakEntries,
            peakBytes: ProcessTotals.peakBytes.load(ordering: .relaxed),
            highWaterMark: 0)
    }

    /// Starts new peaks for the calling thread at the current values.
    ///
    /// ```swift
    /// AutoreleasePool.resetPeaks()
    /// ```
    public static func resetPeaks() {
        ThreadState.current.resetPeaks()
    }

    /// Starts new process-wide peaks at the current totals.
    public static func resetProcessPeaks() {
        ThreadRegistry.resetPeaks()
        ProcessTotals.peakBytes.store(ProcessTotals.pages.load(ordering: .relaxed) * 4096, ordering: .relaxed)
    }
}
