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
public final class MemoryProbe: Sendable {
    private struct Shared {
        var buffer: RingBuffer<MemorySample>
        var clock: (any LoopClock)?
        var installed: [InstalledObserver] = []
    }

    private let shared: Locked<Shared>
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
        self.shared = Locked(Shared(buffer: RingBuffer(capacity: capacity), clock: clock))
        self.recorder = recorder
        self.readsProcess = readsProcess
        self.poolStatistics = poolStatistics
    }

    deinit {
        for item in shared.withLock({ $0.installed }) { item.remove() }
    }

    /// Takes one sample now, on the calling thread.
    @discardableResult
    public func sample(label: String = "sample", activity: Loop.Activity? = nil) -> MemorySample {
        let time = shared.withLock { ($0.clock ?? MonotonicClock.shared).now }
        let sample = MemorySample(
            time: time, activity: activity, label: label, pool: poolStatistics(),
            residentBytes: readsProcess ? ProcessMemory.residentBytes() : 0,
            heapInUseBytes: readsProcess ? ProcessMemory.heapInUseBytes() : 0)
        shared.withLock { $0.buffer.append(sample) }
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
        shared.withLock { if $0.clock == nil { $0.clock = loop.clock } }
        let observer = LoopObserver(activities: activities, order: order, label: "MemoryProbe") { [weak self] _, activity in
            self?.sample(label: activity.cfName, activity: activity)
        }
        loop.add(observer, mode: mode)
        shared.withLock { $0.installed.append(InstalledObserver(loop: loop, observer: observer, mode: mode)) }
        return observer
    }

    /// Removes every observer `install(on:)` added.
    public func uninstall() {
        let items = shared.withLock { state -> [InstalledObserver] in
            defer { state.installed.removeAll() }
            return state.installed
        }
        for item in items { item.remove() }
    }

    /// The kept samples, oldest first.
    public var samples: [MemorySample] { shared.withLock { $0.buffer.elements } }

    /// Forgets every sample.
    public func clear() { shared.withLock { $0.buffer.removeAll() } }
}
