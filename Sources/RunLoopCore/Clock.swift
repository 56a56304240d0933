import CRunLoopShims
import Synchronization

/// Monotonic nanoseconds on a loop's clock.
///
/// ```swift
/// let later: LoopInstant = MonotonicClock.shared.now + 1_000_000  // 1 ms from now
/// ```
public typealias LoopInstant = UInt64

/// The time source of a ``Loop``: real monotonic time or a ``VirtualClock``.
///
/// ```swift
/// let loop = Loop(clock: VirtualClock())
/// print(loop.clock.now)   // 0
/// ```
public protocol LoopClock: AnyObject, Sendable {
    /// The current instant in nanoseconds.
    var now: LoopInstant { get }
    /// True when waits jump time instead of sleeping.
    var isVirtual: Bool { get }
}

/// `CLOCK_MONOTONIC` in nanoseconds, the clock CF uses on Linux (X2).
///
/// ```swift
/// let t = MonotonicClock.shared.now
/// ```
public final class MonotonicClock: LoopClock {
    /// The process-wide instance.
    public static let shared = MonotonicClock()
    private init() {}
    public var now: LoopInstant { rlk_monotonic_ns() }
    public var isVirtual: Bool { false }
}

/// A clock that only moves when told to or when a loop waits.
///
/// A loop on a virtual clock never sleeps for time: a wait first polls its descriptors with a
/// zero timeout, then jumps `now` to the next deadline (a timer or the run timeout). Only when
/// there is no deadline at all does it block, on the real descriptors (wake-ups, ports, fds).
///
/// ```swift
/// let clock = VirtualClock()
/// clock.advance(seconds: 0.075)   // simulate 75 ms of work inside a callout
/// ```
public final class VirtualClock: LoopClock {
    private let current: Atomic<UInt64>

    /// Creates a clock reading `start` nanoseconds.
    public init(start: LoopInstant = 0) { current = Atomic(start) }

    public var now: LoopInstant { current.load(ordering: .acquiring) }
    public var isVirtual: Bool { true }

    /// Moves time forward by `nanoseconds`.
    public func advance(by nanoseconds: UInt64) {
        _ = current.wrappingAdd(nanoseconds, ordering: .acquiringAndReleasing)
    }

    /// Moves time forward by `seconds` (negative or NaN values are ignored).
    public func advance(seconds: Double) {
        guard seconds > 0 else { return }
        advance(by: Nanoseconds.from(seconds: seconds))
    }

    /// Moves time forward to `instant` if it is later than `now` (a wait's jump).
    func advance(to instant: LoopInstant) {
        var seen = current.load(ordering: .acquiring)
        while seen < instant {
            let (exchanged, original) = current.compareExchange(
                expected: seen, desired: instant, ordering: .acquiringAndReleasing)
            if exchanged { return }
            seen = original
        }
    }
}

/// Seconds ↔ nanoseconds conversions with CF's clamps.
enum Nanoseconds {
    /// CF's TIMER_INTERVAL_LIMIT (504911232 s, ~16 years): longer intervals/timeouts are clamped
    /// (intervals) or mean "forever" (run timeouts).
    static let intervalLimitSeconds: Double = 504_911_232.0

    /// Converts a non-negative, finite number of seconds, clamped to the interval limit.
    static func from(seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        let clamped = min(seconds, intervalLimitSeconds)
        return UInt64((clamped * 1e9).rounded())
    }

    static func seconds(_ ns: UInt64) -> Double { Double(ns) / 1e9 }

    /// `a + b` saturating at `UInt64.max`.
    @inline(__always)
    static func add(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
