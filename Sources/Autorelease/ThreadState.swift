// Per-thread bookkeeping for the statistics: page count and peaks. Reached through its own
// pthread key and touched only by its thread; what other threads may read is published into
// process-wide atomics (`ProcessTotals`).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

let threadStateKey: pthread_key_t = {
    // Created after the hot-page key so that, at thread exit, glibc (which runs destructors in
    // key order) drains the pages before it drops this state.
    _ = hotPageKey
    return makeKey { value in
        guard let value else { return }
        let state = Unmanaged<ThreadState>.fromOpaque(value).takeRetainedValue()
        state.publishZero()
    }
}()

/// Thread-confined: only the owning thread reads or writes these fields (the key is per thread).
final class ThreadState {
    var pages = 0
    var peakEntries = 0
    var peakBytes = 0
    var publishedEntries = 0
    var publishedPages = 0

    static var current: ThreadState {
        if let value = pthread_getspecific(threadStateKey) {
            return Unmanaged<ThreadState>.fromOpaque(value).takeUnretainedValue()
        }
        let state = ThreadState()
        _ = pthread_setspecific(threadStateKey, Unmanaged.passRetained(state).toOpaque())
        return state
    }

    /// Entries only grow between pops, so sampling before every pop (and at page growth and
    /// at every query) sees the maximum.
    func samplePeakEntries() {
        let entries = ThreadPool.pendingEntries(ThreadPool.loadWord())
        if entries > peakEntries { peakEntries = entries }
    }

    func pagesChanged(by delta: Int) {
        pages += delta
        let bytes = pages * PageLayout.size
        if bytes > peakBytes { peakBytes = bytes }
        publishedPages += delta
        let total = ProcessTotals.shared.pages.add(delta, ordering: .relaxed).newValue
        ProcessTotals.shared.raisePeakBytes(total * PageLayout.size)
    }

    /// Makes this thread's pending entries visible to `processStatistics`.
    func publish() {
        let entries = ThreadPool.pendingEntries(ThreadPool.loadWord())
        let delta = entries - publishedEntries
        guard delta != 0 else { return }
        publishedEntries = entries
        let total = ProcessTotals.shared.entries.add(delta, ordering: .relaxed).newValue
        ProcessTotals.shared.raisePeakEntries(total)
    }

    func publishZero() {
        _ = ProcessTotals.shared.entries.subtract(publishedEntries, ordering: .relaxed)
        _ = ProcessTotals.shared.pages.subtract(publishedPages, ordering: .relaxed)
        publishedEntries = 0
        publishedPages = 0
    }
}

/// Sums over all threads. Entries are as published by each thread at its last pop, page change
/// or statistics query; pages and bytes are exact at all times.
final class ProcessTotals: Sendable {
    static let shared = ProcessTotals()
    let entries = Atomic<Int>(0)
    let pages = Atomic<Int>(0)
    let peakEntries = Atomic<Int>(0)
    let peakBytes = Atomic<Int>(0)

    func raisePeakEntries(_ value: Int) { raise(peakEntries, to: value) }
    func raisePeakBytes(_ value: Int) { raise(peakBytes, to: value) }

    private func raise(_ peak: borrowing Atomic<Int>, to value: Int) {
        var current = peak.load(ordering: .relaxed)
        while value > current {
            let (exchanged, original) = peak.compareExchange(expected: current, desired: value, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
