#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A monotonic clock in nanoseconds, injected into a `CommitPipeline` so that
/// "flush if too late" and animation completions can be tested on virtual time.
///
/// The member is named `now` and returns `UInt64` so a run loop's clock type with the same shape
/// (e.g. RunLoopCore's `LoopClock`) can conform with an empty extension.
///
/// ```swift
/// let clock = ManualTransactionClock()
/// let pipeline = CommitPipeline(clock: clock)
/// clock.advance(nanoseconds: 20_000_000)
/// ```
public protocol TransactionClock: AnyObject, Sendable {
    /// Monotonic nanoseconds; only differences are meaningful.
    var now: UInt64 { get }
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

    public var now: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}

/// Virtual time that moves only when told to; for deterministic tests.
///
/// ```swift
/// let clock = ManualTransactionClock(start: 0)
/// clock.advance(seconds: 0.25)
/// clock.now   // 250_000_000
/// ```
public final class ManualTransactionClock: TransactionClock {
    private let current: Atomic<UInt64>

    public init(start: UInt64 = 0) { current = Atomic(start) }

    public var now: UInt64 { current.load(ordering: .acquiring) }

    /// Moves time forward by `nanoseconds`.
    public func advance(nanoseconds: UInt64) {
        current.add(nanoseconds, ordering: .acquiringAndReleasing)
    }

    /// Moves time forward by `seconds` (rounded to whole nanoseconds; negative is ignored).
    public func advance(seconds: Double) {
        guard seconds > 0 else { return }
        advance(nanoseconds: UInt64((seconds * 1e9).rounded()))
    }
}

/// Converts seconds to whole nanoseconds, clamping NaN and negatives to zero.
func nanoseconds(fromSeconds seconds: Double) -> UInt64 {
    guard seconds.isFinite, seconds > 0 else { return seconds == .infinity ? .max : 0 }
    let value = (seconds * 1e9).rounded()
    return value >= 1.8e19 ? .max : UInt64(value)
}
