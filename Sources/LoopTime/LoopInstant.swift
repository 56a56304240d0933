/// An instant on a loop's clock: nanoseconds since the clock's origin (boot for RunLoopCore's
/// `MonotonicClock`, the start value for a `VirtualClock`). The commit pipeline keeps its time in
/// the same type, so a loop's clock and a pipeline's clock read alike.
///
/// Instants compare and subtract as a Swift `InstantProtocol`; arithmetic saturates at the
/// clock's origin and at ``distantFuture`` instead of trapping.
///
/// ```swift
/// let start = LoopInstant(nanoseconds: 1_000_000)
/// let deadline = start.advanced(by: .milliseconds(20))
/// print(start.duration(to: deadline))   // 0.02 seconds
/// ```
public struct LoopInstant: InstantProtocol, Hashable, Sendable, CustomStringConvertible {
    public typealias Duration = Swift.Duration

    /// Nanoseconds since the clock's origin.
    public let nanoseconds: UInt64

    /// The instant `nanoseconds` after the clock's origin.
    @inlinable
    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// The clock's origin.
    public static let zero = LoopInstant(nanoseconds: 0)
    /// Later than every reachable instant ("never").
    public static let distantFuture = LoopInstant(nanoseconds: .max)

    /// The instant `duration` later (earlier when negative), clamped to the representable range.
    @inlinable
    public func advanced(by duration: Duration) -> LoopInstant {
        if duration >= .zero {
            return LoopInstant(nanoseconds: Nanoseconds.add(nanoseconds, Nanoseconds.from(duration)))
        }
        let back = Nanoseconds.from(.zero - duration)
        return LoopInstant(nanoseconds: nanoseconds > back ? nanoseconds - back : 0)
    }

    /// The signed duration from this instant to `other`.
    public func duration(to other: LoopInstant) -> Duration {
        if other.nanoseconds >= nanoseconds {
            return Self.duration(nanoseconds: other.nanoseconds - nanoseconds)
        }
        return .zero - Self.duration(nanoseconds: nanoseconds - other.nanoseconds)
    }

    @inlinable
    public static func < (lhs: LoopInstant, rhs: LoopInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// "12.5 ms", "3 s", "never": readable in traces and test failures.
    public var description: String {
        if self == .distantFuture { return "never" }
        return Self.format(nanoseconds: nanoseconds)
    }

    /// A duration of `nanoseconds`, exact for every `UInt64`.
    package static func duration(nanoseconds: UInt64) -> Duration {
        .seconds(Int64(nanoseconds / 1_000_000_000)) + .nanoseconds(Int64(nanoseconds % 1_000_000_000))
    }

    package static func format(nanoseconds: UInt64) -> String {
        if nanoseconds == 0 { return "0 ns" }
        if nanoseconds % 1_000_000_000 == 0 { return "\(nanoseconds / 1_000_000_000) s" }
        if nanoseconds % 1_000_000 == 0 { return "\(nanoseconds / 1_000_000) ms" }
        if nanoseconds % 1_000 == 0 { return "\(nanoseconds / 1_000) µs" }
        return "\(nanoseconds) ns"
    }
}
