@testable import RunLoopCore

// Millisecond shorthands for the rule tests, which state dates in whole milliseconds of a
// virtual clock that starts at 0.

/// The instant `ms` milliseconds after the clock's origin.
func at(ms: UInt64) -> LoopInstant { LoopInstant(nanoseconds: ms * 1_000_000) }

extension LoopInstant {
    /// Whole milliseconds since the clock's origin (for traces such as "t1@14").
    var ms: UInt64 { nanoseconds / 1_000_000 }
}

extension VirtualClock {
    /// Moves time forward by `ms` milliseconds. For callouts, which cannot throw: a
    /// non-negative step cannot fail, so it goes through `advance(to:)`.
    func advance(ms: UInt64) { advance(to: now.advanced(by: .milliseconds(ms))) }
}
