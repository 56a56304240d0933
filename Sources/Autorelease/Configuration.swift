import Synchronization

extension AutoreleasePool {
    /// How repeated autoreleases of one object share a slot (objc4 >= 818 coalescing).
    public enum Coalescing: UInt, Sendable, CaseIterable {
        /// objc4's default: look at the 4 most recent entries of the hot page (never slot 0,
        /// never across a boundary); a match moves to the top with its count incremented.
        case lru = 0
        /// `OBJC_DISABLE_AUTORELEASE_COALESCING_LRU=YES`: only the top entry is compared.
        case topOnly = 1
        /// Both objc4 variables set: every autorelease takes its own slot.
        case off = 2
    }

    /// What an autorelease does when the thread has no pool.
    public enum MissingPoolBehavior: UInt, Sendable, CaseIterable {
        /// objc4's default: an implicit cold page whose slot 0 holds the object, drained at
        /// thread exit. Nothing is printed.
        case implicitColdPage = 0
        /// `OBJC_DEBUG_MISSING_POOLS=YES`: print the MISSING POOLS line (with the object's type
        /// name) and leak the object, as objc4 does.
        case diagnoseAndLeak = 1
        /// `OBJC_DEBUG_MISSING_POOLS=fatal`: print the line, then trap.
        case fatal = 2
    }

    /// objc4's `OBJC_PRINT_POOL_HIGHWATER`: the high-water mark is updated at the start of each
    /// pop when it exceeds the previous mark by more than 256.
    public enum HighWaterTracking: UInt, Sendable, CaseIterable {
        case off = 0
        /// Keep `Statistics.highWaterMark` up to date, print nothing.
        case track = 1
        /// Track and report each new mark with objc4's `POOL HIGHWATER:` text, as a
        /// `pool.high-water` diagnostic (standard error by default).
        case report = 2
    }

    /// Per-thread pool settings. New threads start from `AutoreleasePool.defaultConfiguration`.
    ///
    /// ```swift
    /// AutoreleasePool.configuration.coalescing = .off   // this thread only
    /// ```
    public struct Configuration: Sendable, Equatable {
        public var coalescing: Coalescing
        public var missingPool: MissingPoolBehavior
        public var highWater: HighWaterTracking

        /// objc4's defaults: LRU coalescing, implicit cold page, no high-water tracking.
        public init(coalescing: Coalescing = .lru, missingPool: MissingPoolBehavior = .implicitColdPage,
                    highWater: HighWaterTracking = .off) {
            self.coalescing = coalescing
            self.missingPool = missingPool
            self.highWater = highWater
        }

        var flags: UInt {
            coalescing.rawValue << ThreadWord.coalescingShift
                | missingPool.rawValue << ThreadWord.missingPoolShift
                | highWater.rawValue << ThreadWord.highWaterShift
                | ThreadWord.initialisedBit
        }

        init(flags: UInt) {
            coalescing = Coalescing(rawValue: (flags & ThreadWord.coalescingMask) >> ThreadWord.coalescingShift) ?? .lru
            missingPool = MissingPoolBehavior(rawValue: (flags & ThreadWord.missingPoolMask) >> ThreadWord.missingPoolShift)
                ?? .implicitColdPage
            highWater = HighWaterTracking(rawValue: (flags & ThreadWord.highWaterMask) >> ThreadWord.highWaterShift) ?? .off
        }
    }

    /// The settings of the calling thread's pool. Changing them affects only this thread.
    ///
    /// ```swift
    /// AutoreleasePool.configuration.missingPool = .diagnoseAndLeak
    /// ```
    public static var configuration: Configuration {
        get { Configuration(flags: ThreadPool.currentFlags()) }
        set { ThreadPool.setFlags(newValue.flags) }
    }

    /// The settings a thread gets the first time it touches its pool (process-wide).
    ///
    /// ```swift
    /// AutoreleasePool.defaultConfiguration = .init(coalescing: .topOnly)
    /// ```
    public static var defaultConfiguration: Configuration {
        get { Configuration(flags: defaultFlags.load(ordering: .relaxed)) }
        set { defaultFlags.store(newValue.flags, ordering: .relaxed) }
    }
}

/// Process default flags for threads that have not touched their pool yet.
let defaultFlags = Atomic<UInt>(AutoreleasePool.Configuration().flags)
