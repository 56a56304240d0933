// Per-thread bookkeeping for the statistics: page count and peaks. Reached through a C
// thread-local (CPoolThreadWord), mirrored in a pthread key for the exit destructor. The plain
// fields are touched only by the owning thread; what other threads may read is published into
// atomics (per thread, so a pop never writes a shared cache line) and summed on demand through
// a registry.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CPoolThreadWord
import PThreads
import Synchronization

let threadStateKey: pthread_key_t = {
    // Created after the hot-page key so that, at thread exit, glibc (which runs destructors in
    // key order) drains the pages before it drops this state.
    _ = hotPageKey
    return makeKey { value in
        guard let value else { return }
        rlk_pool_store_state(nil)
        ThreadRegistry.retire(value.assumingMemoryBound(to: ThreadStateData.self))
    }
}()

/// A thread's statistics state, in malloc'd memory so the pop path touches it without ARC.
struct ThreadStateData: ~Copyable {
    // Owner thread only (see the file comment).
    var pages = 0
    var peakEntries = 0
    var peakBytes = 0
    /// The process-peak epoch `processPeakEntries` belongs to, and the owner's copy of it.
    var processEpoch = 0
    var processPeakCache = 0

    // Written by the owner, read by `processStatistics` on any thread.
    let publishedEntries = Atomic<Int>(0)
    let processPeakEntries = Atomic<Int>(0)
    let publishedEpoch = Atomic<Int>(0)
}

/// A handle on the calling thread's state.
struct ThreadState {
    let data: UnsafeMutablePointer<ThreadStateData>

    static var current: ThreadState {
        if let value = rlk_pool_load_state() {
            return ThreadState(data: value.assumingMemoryBound(to: ThreadStateData.self))
        }
        return makeCurrent()
    }

    /// The thread's first use: allocates, registers, and arms the exit destructor.
    @inline(never)
    static func makeCurrent() -> ThreadState {
        let data = UnsafeMutablePointer<ThreadStateData>.allocate(capacity: 1)
        data.initialize(to: ThreadStateData())
        ThreadRegistry.add(data)
        let status = pthread_setspecific(threadStateKey, data)
        if status != 0 {
            PoolDiagnostics.systemCallFailed("pthread_setspecific", status: status,
                                             consequence: "this thread's statistics stay counted in processStatistics after it exits")
        }
        rlk_pool_store_state(data)
        return ThreadState(data: data)
    }

    var pages: Int { data.pointee.pages }
    var peakEntries: Int { data.pointee.peakEntries }
    var peakBytes: Int { data.pointee.peakBytes }

    /// Entries only grow between pops, so sampling before every pop (and at page growth, after
    /// a release that left entries behind, and at every query) sees the maximum.
    @inline(__always)
    func samplePeakEntries(_ word: UInt = ThreadPool.loadWord()) {
        samplePeakEntries(ThreadPool.pendingEntries(word))
    }

    /// `samplePeakEntries` with the pending entries already counted (the pop's fast path).
    @inline(__always)
    func samplePeakEntries(_ entries: Int) {
        if entries > data.pointee.peakEntries { data.pointee.peakEntries = entries }
        let epoch = ProcessTotals.epoch.load(ordering: .relaxed)
        if epoch != data.pointee.processEpoch {
            data.pointee.processEpoch = epoch
            data.pointee.processPeakCache = entries
            data.pointee.publishedEpoch.store(epoch, ordering: .relaxed)
            data.pointee.processPeakEntries.store(entries, ordering: .relaxed)
        } else if entries > data.pointee.processPeakCache {
            data.pointee.processPeakCache = entries
            data.pointee.processPeakEntries.store(entries, ordering: .relaxed)
        }
    }

    func pagesChanged(by delta: Int) {
        data.pointee.pages += delta
        let bytes = data.pointee.pages * PageLayout.size
        if bytes > data.pointee.peakBytes { data.pointee.peakBytes = bytes }
        let total = ProcessTotals.pages.add(delta, ordering: .relaxed).newValue
        ProcessTotals.raisePeakBytes(total * PageLayout.size)
    }

    /// Makes this thread's pending entries visible to `processStatistics`.
    @inline(__always)
    func publish(_ word: UInt = ThreadPool.loadWord()) {
        publish(entries: ThreadPool.pendingEntries(word))
    }

    /// `publish` with the pending entries already counted (the pop's fast path).
    @inline(__always)
    func publish(entries: Int) {
        data.pointee.publishedEntries.store(entries, ordering: .relaxed)
    }

    func resetPeaks() {
        data.pointee.peakEntries = ThreadPool.pendingEntries(ThreadPool.loadWord())
        data.pointee.peakBytes = data.pointee.pages * PageLayout.size
    }
}

/// Every live thread's state, for summing. A state is freed only under the lock, after
/// leaving the set, so readers never see freed memory.
enum ThreadRegistry {
    /// Addresses of the live threads' `ThreadStateData`.
    private static let states = Locked<Set<UInt>>([])

    static func add(_ data: UnsafeMutablePointer<ThreadStateData>) {
        states.withLock { _ = $0.insert(UInt(bitPattern: data)) }
    }

    /// At thread exit: the thread's peak moves to the retired total and its state is freed.
    static func retire(_ data: UnsafeMutablePointer<ThreadStateData>) {
        states.withLock { states in
            states.remove(UInt(bitPattern: data))
            if data.pointee.publishedEpoch.load(ordering: .relaxed) == ProcessTotals.epoch.load(ordering: .relaxed) {
                ProcessTotals.retiredPeakEntries.add(data.pointee.processPeakEntries.load(ordering: .relaxed), ordering: .relaxed)
            }
            data.deinitialize(count: 1)
            data.deallocate()
        }
    }

    /// (pending entries, summed peaks) over live threads plus the peaks of exited ones.
    static func sums() -> (entries: Int, peakEntries: Int) {
        states.withLock { states in
            let epoch = ProcessTotals.epoch.load(ordering: .relaxed)
            var entries = 0
            var peaks = ProcessTotals.retiredPeakEntries.load(ordering: .relaxed)
            for address in states {
                let data = UnsafeMutablePointer<ThreadStateData>(bitPattern: address).unsafelyUnwrapped
                let pending = data.pointee.publishedEntries.load(ordering: .relaxed)
                entries += pending
                peaks += data.pointee.publishedEpoch.load(ordering: .relaxed) == epoch
                    ? max(data.pointee.processPeakEntries.load(ordering: .relaxed), pending) : pending
            }
            return (entries, peaks)
        }
    }

    static func resetPeaks() {
        states.withLock { _ in
            _ = ProcessTotals.epoch.add(1, ordering: .relaxed)
            ProcessTotals.retiredPeakEntries.store(0, ordering: .relaxed)
        }
    }
}

/// Process-wide atomics: pages and bytes are exact at all times (updated at every page
/// allocation and free). Static lets with constant initialisers, so reading one is a plain
/// load with no lazy-initialisation check on the pop path.
enum ProcessTotals {
    static let pages = Atomic<Int>(0)
    static let peakBytes = Atomic<Int>(0)
    static let epoch = Atomic<Int>(1)
    static let retiredPeakEntries = Atomic<Int>(0)

    static func raisePeakBytes(_ value: Int) {
        var current = peakBytes.load(ordering: .relaxed)
        while value > current {
            let (exchanged, original) = peakBytes.compareExchange(expected: current, desired: value, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
