import PThreads
import RunLoopKit

/// Returns recorded clock readings, one per read, in order; past the last one it reads
/// `fallback`. A replayed scenario's trace recorder stamps its own entries (logs, marks) with
/// it, so each gets the reading the recording took. It never sleeps.
final class RecordedReadsClock: LoopClock {
    private let readings: Locked<ArraySlice<LoopInstant>>
    private let fallback: VirtualClock

    init(_ readings: [LoopInstant], fallback: VirtualClock) {
        self.readings = Locked(readings[...])
        self.fallback = fallback
    }

    var now: LoopInstant { readings.withLock { $0.popFirst() } ?? fallback.now }
    var isVirtual: Bool { true }
    var minimumResolution: Duration { .nanoseconds(1) }

    /// Nothing sleeps on a replay's recorded readings.
    func sleep(until deadline: LoopInstant, tolerance: Duration? = nil) async throws {
        throw RecordedReadsClockCannotSleep()
    }
}

/// What `RecordedReadsClock.sleep` throws.
struct RecordedReadsClockCannotSleep: Error {}
