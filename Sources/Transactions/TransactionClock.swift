#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_exported import LoopTime
import Synchronization

/// The time source of a `CommitPipeline`, so that "flush if too late" and animation completions
/// can be tested on virtual time.
///
/// It reads `LoopInstant`s, the instant type RunLoopCore's loop clocks read too: the umbrella's
/// `LoopTransactionClock` hands a loop's clock to a pipeline unchanged.
///
/// ```swift
/// let clock = ManualTransactionClock()
/// let pipeline = CommitPipeline(clock: clock)
/// try clock.advance(by: .milliseconds(20))
/// ```
public protocol TransactionClock: AnyObject, Sendable {
    /// The current instant; only differences between instants are meaningful.
    var now: LoopInstant { get }
}

/// Real time: `CLOCK_MONOTONIC`.
///
/// ```swift
/// let t = SystemTransactionClock.shared.now
/// ```
public final class SystemTransactionClock: TransactionClock {
    /// The process-wide instance.
    public static let shared = SystemTransactionClock()
    private init() {}

    public var now: LoopInstant {
        var ts = timespec()
        // CLOCK_MONOTONIC cannot fail with a valid timespec pointer and a supported clock id.
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return LoopInstant(nanoseconds: UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec))
    }
}

/// Virtual time that moves only when told to; for deterministic tests.
///
/// ```swift
/// let clock = ManualTransactionClock()
/// try clock.advance(by: .milliseconds(250))
/// print(clock.now)   // 250 ms
/// ```
public final class ManualTransactionClock: TransactionClock {
    private let current: Atomic<UInt64>

    /// A clock that reads `start` until advanced.
    public init(start: LoopInstant = .zero) { current = Atomic(start.nanoseconds) }

    public var now: LoopInstant { LoopInstant(nanoseconds: current.load(ordering: .acquiring)) }

    /// Moves time forward by `duration`. A clock cannot go back: a negative duration throws and
    /// leaves the time unchanged.
    public func advance(by duration: Duration) throws(TransactionError) {
        guard duration >= .zero else {
            throw .negativeDuration(duration, what: "ManualTransactionClock.advance(by:)")
        }
        current.add(Nanoseconds.from(duration), ordering: .acquiringAndReleasing)
    }
}
