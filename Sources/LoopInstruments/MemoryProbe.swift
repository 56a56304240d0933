import PThreads
import RunLoopCore

/// Samples pool statistics, RSS and heap in use — on demand, or at chosen activities of a
/// loop — and keeps the time series (bounded).
///
/// ```swift
/// let probe = MemoryProbe(recorder: recorder)            // samples also go into the trace
/// probe.install(on: loop, activities: [.afterWaiting, .beforeWaiting])
/// loop.run(mode: .default, timeout: 1)
/// let peak = probe.samples.map(\.pool.pendingEntries).max()
/// ```
public final class MemoryProbe: @unchecked Sendable {
    // Sendable: mutable state is guarded by `lock`; `poolStatistics` is @Sendable.
    private let lock = PThreadMutex()
    private var buffer: RingBuffer<MemorySample>
    private var clock: (any LoopClock)?
    private var installed: [InstalledObserver] = []
    private let recorder: TraceRecorder?
    private let poolStatistics: @Sendable () -> PoolSnapshot
    private let readsProcess: Bool

    /// - Parameters:
    ///   - clock: stamps samples; `install(on:)` adopts the loop's clock when nil;
    ///     `MonotonicClock.shared` otherwise.
    ///   - recorder: when given, every sample is also recorded into it (for exports).
    ///   - readsProcess: false skips /proc and mallinfo2 (e.g. for pool-only charts).
    ///   - poolStatistics: where pool figures come from; the calling thread's pool by default
    ///     (observer samples run on the loop's thread, so that is the loop thread's pool).
    ///   - capacity: the most samples kept; older ones are overwritten.
    public init(clock: (any LoopClock)? = nil, recorder: TraceRecorder? = nil, readsProcess: Bool = true,
                poolStatistics: @escaping @Sendable () -> PoolSnapshot = PoolSnapshot.currentThread,
                capacity: Int = 100_000) {
        self.clock = clock
        self.recorder = recorder
        self.readsProcess = readsProcess
        self.poolStatistics = poolStatistics
        self.buffer = RingBuffer(capacity: capacity)
    }

    deinit {
        for item in installed { item.remove() }
    }

    /// Takes one sample now, on the calling thread.
    @discardableResult
    public func sample(label: String = "sample", activity: Loop.Activity? = nil) -> MemorySample {
        let time = lock.withLock { (clock ?? MonotonicClock.shared).now }
        let sample = MemorySample(
            time: time, activity: activity, label: label, pool: poolStatistics(),
            residentBytes: readsProcess ? ProcessMemory.residentBytes() : 0,
            heapInUseBytes: readsProcess ? ProcessMemory.heapInUseBytes() : 0)
        lock.withLock { buffer.append(sample) }
        recorder?.record(sample)
        return sample
    }

    /// Adds an observer that samples at `activities`, labelled with the activity's CF name.
    ///
    /// The default order, `Int.max - 1`, runs after the pool's pop at 2147483647: the sample
    /// shows what survived the turn. Use an order below 2147483647 (e.g. 2_100_000_000) to see
    /// the turn's peak before the pop.
    @discardableResult
    public func install(on loop: Loop, activities: Loop.Activity = [.afterWaiting, .beforeWaiting, .exit],
                        mode: Loop.Mode = .common, order: Int = Int.max - 1) -> LoopObserver {
        lock.withLock { if clock == nil { clock = loop.clock } }
        let observer = LoopObserver(activities: activities, order: order, label: "MemoryProbe") { [weak self] _, activity in
            self?.sample(label: activity.cfName, activity: activity)
        }
        loop.add(observer, mode: mode)
        lock.withLock { installed.append(InstalledObserver(loop: loop, observer: observer, mode: mode)) }
        return observer
    }

    /// Removes every observer `install(on:)` added.
    public func uninstall() {
        let items = lock.withLock { () -> [InstalledObserver] in
            defer { installed.removeAll() }
            return installed
        }
        for item in items { item.remove() }
    }

    /// The kept samples, oldest first.
    public var samples: [MemorySample] { lock.withLock { buffer.elements } }

    /// Forgets every sample.
    public func clear() { lock.withLock { buffer.removeAll() } }
}
