import Synchronization

/// A clock tests set by hand, backwards too (a ``VirtualClock`` only moves forward): for code
/// that only reads time, such as recorders and exporters, whose handling of a clock that went
/// back is under test. A task waiting on it resumes once a `set` or `advance` reaches its
/// deadline, as on a ``VirtualClock``. Package-visible: the package's tests use it, the loop
/// itself never does (a loop's clock is monotonic). It counts its readings, for tests of code
/// that should not read the time.
package final class ManualClock: LoopClock {
    private let current: Atomic<UInt64>
    private let readings = Atomic<Int>(0)
    private let waiters = VirtualSleepers()

    package init(_ start: LoopInstant = .zero) { current = Atomic(start.nanoseconds) }

    package var now: LoopInstant {
        readings.add(1, ordering: .relaxed)
        return LoopInstant(nanoseconds: current.load(ordering: .acquiring))
    }

    /// How many times ``now`` has been read.
    package var readingCount: Int { readings.load(ordering: .relaxed) }
    package var isVirtual: Bool { true }
    package var minimumResolution: Duration { .nanoseconds(1) }

    /// Sets the reading to `instant`, earlier or later than now.
    package func set(_ instant: LoopInstant) {
        current.store(instant.nanoseconds, ordering: .releasing)
        waiters.resume(upTo: instant.nanoseconds)
    }

    /// Moves the reading by `milliseconds` (negative: back).
    package func advance(milliseconds: Int64) {
        set(now.advanced(by: .milliseconds(milliseconds)))
    }

    package func sleep(until deadline: LoopInstant, tolerance: Duration? = nil) async throws {
        try await waiters.sleep(until: deadline.nanoseconds, clockNow: { self.current.load(ordering: .acquiring) })
    }
}
