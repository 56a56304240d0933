import Autorelease
import CAllocationCounter
import PThreads

/// The process-wide switch of the interposed allocator (linked in with this module).
///
/// Linking `LoopAllocationCounter` replaces `malloc`, `calloc`, `realloc`, `reallocarray`,
/// `free`, `posix_memalign`, `aligned_alloc`, `memalign`, `valloc` and `pvalloc` with versions
/// that forward to glibc and count on the calling thread. The counter starts ``Mode/off``.
///
/// ```swift
/// AllocationCounter.mode = .counting
/// let before = AllocationCounter.beginSpan()
/// let block = malloc(1000)
/// free(block)
/// let figures = AllocationCounter.currentThread().user.since(before.user)
/// print(figures.allocations, figures.frees, figures.bytes)   // 1 1 1000
/// AllocationCounter.mode = .off
/// ```
public enum AllocationCounter {
    /// What the counter does on each allocator call.
    public enum Mode: Sendable, Equatable {
        /// Forwards only: `malloc` and `free` are a compare and one jump to glibc, the other entry
        /// points a load and a branch.
        case off
        /// Counts, usable bytes, live and peak bytes per thread; no lock, nothing allocated.
        case counting
        /// One sample every `everyBytes` requested bytes, on the allocating thread; frees go
        /// straight to glibc. For production use.
        case sampling(everyBytes: UInt64)
        /// Counting, plus a side table of every live block (site and generation) for
        /// ``AllocationGeneration`` and the peak snapshots. Takes a striped lock per call.
        case generations
    }

    /// Whether this build replaces the allocator. False under a sanitizer (which owns malloc):
    /// every figure then stays zero.
    public static var isInterposing: Bool { rlk_alloc_is_interposing() != 0 }

    /// The current mode. Switching it on also installs the autorelease pool's page hook, which
    /// routes page allocations to the ``ThreadAllocationFigures/poolPages`` bucket; the hook
    /// stays installed (a call per page allocation and free).
    public static var mode: Mode {
        get {
            switch rlk_alloc_get_mode() {
            case RLK_ALLOC_COUNTING: .counting
            case RLK_ALLOC_SAMPLING: .sampling(everyBytes: rlk_alloc_get_sample_interval())
            case RLK_ALLOC_GENERATIONS: .generations
            default: .off
            }
        }
        set {
            switch newValue {
            case .off:
                // The page hook stays: removing it while a thread is between its "before" and
                // "after" calls would leave that thread's allocations in the pool-page bucket.
                rlk_alloc_set_mode(RLK_ALLOC_OFF)
                return
            case .counting: rlk_alloc_set_mode(RLK_ALLOC_COUNTING)
            case .sampling(let bytes):
                rlk_alloc_set_sample_interval(bytes)
                rlk_alloc_set_mode(RLK_ALLOC_SAMPLING)
            case .generations: rlk_alloc_set_mode(RLK_ALLOC_GENERATIONS)
            }
            PoolPageAllocationHook.install(rlk_alloc_pool_page_scope)
        }
    }

    /// Serialises ``withMode(_:_:)`` callers, the mode being process-wide: whether a caller's
    /// body is running (its turn), taken and given back under the value's lock, which nobody
    /// holds while their body runs (a body runs loops, and RunLoopKit runs no user code, a
    /// diagnostics handler among it, under its locks).
    private static let turnTaken = Locked(false)
    /// Broadcast when a turn is given back.
    private static let turnGivenBack = PThreadCondition()

    /// Runs `body` with the counter in `mode`, then restores the previous mode. Callers from
    /// several threads (parallel tests, a scenario) take turns: the second waits until the
    /// first's body returns. Not reentrant.
    ///
    /// ```swift
    /// let bytes = AllocationCounter.withMode(.counting) { () -> UInt64 in
    ///     let before = AllocationCounter.beginSpan().user
    ///     free(malloc(100))
    ///     return AllocationCounter.currentThread().user.since(before).bytes
    /// }
    /// print(bytes)   // 104: glibc's usable size for 100 bytes
    /// ```
    public static func withMode<Result, Failure: Error>(_ mode: Mode, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        // Waits for the turn and takes it in the critical section that finds it free.
        _ = turnTaken.wait(on: turnGivenBack, untilMonotonicNanoseconds: .max) { taken in
            guard !taken else { return false }
            taken = true
            return true
        }
        let previous = self.mode
        self.mode = mode
        defer {
            self.mode = previous
            turnTaken.withLock { $0 = false }
            turnGivenBack.broadcast()
        }
        return try body()
    }

    /// Starts a span on the calling thread: resets its peaks to the live bytes now and returns
    /// the figures, for ``AllocationTotals/since(_:highestLive:)`` at the span's end.
    public static func beginSpan() -> ThreadAllocationFigures {
        rlk_alloc_reset_peak()
        return currentThread()
    }

    /// The calling thread's running figures.
    public static func currentThread() -> ThreadAllocationFigures {
        ThreadAllocationFigures(raw: readRaw())
    }

    /// Runs `body` with the calling thread's allocations and frees counted apart (in
    /// ``ThreadAllocationFigures/ignored``), e.g. an instrument's own bookkeeping.
    public static func ignoring<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let previous = rlk_alloc_set_category(RLK_ALLOC_IGNORED)
        defer { rlk_alloc_set_category(previous) }
        return try body()
    }

    @inline(__always)
    static func readRaw() -> rlk_alloc_thread_figures {
        var raw = rlk_alloc_thread_figures()
        rlk_alloc_read(&raw)
        return raw
    }
}
