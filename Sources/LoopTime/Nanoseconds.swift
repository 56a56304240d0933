// Nanosecond arithmetic shared by every module that keeps time in `LoopInstant`s.
/// Nanoseconds ↔ seconds and `Duration` conversions with CF's clamps (package-wide: the
/// loop, the commit pipeline and the instruments convert durations the same way).
@usableFromInline
package enum Nanoseconds {
    /// CF's TIMER_INTERVAL_LIMIT (504911232 s, ~16 years): longer intervals/timeouts are clamped
    /// (intervals) or mean "forever" (run timeouts).
    @usableFromInline
    package static let intervalLimitSeconds: Double = 504_911_232.0
    /// The same limit in nanoseconds. Computed, not stored: a stored constant of another module
    /// is read through an accessor and a `swift_once` check on every use (a run's timeout
    /// reads it once per run).
    @inlinable
    package static var intervalLimit: UInt64 { 504_911_232 * 1_000_000_000 }

    /// Converts a non-negative, finite number of seconds, clamped to the interval limit.
    @inlinable
    package static func from(seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        let clamped = min(seconds, intervalLimitSeconds)
        return UInt64((clamped * 1e9).rounded())
    }

    /// Converts a duration, negative as 0, saturating at `UInt64.max`.
    @inlinable
    package static func from(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, duration > .zero else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        return add(whole, UInt64(attoseconds / 1_000_000_000))
    }

    @inlinable
    package static func seconds(_ ns: UInt64) -> Double { Double(ns) / 1e9 }

    /// `a + b` saturating at `UInt64.max`.
    @inlinable @inline(__always)
    package static func add(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
