import RunLoopCore

/// The real-clock sleeps the virtual-loop tests hand to `withVirtualLoop` as input: the feature
/// under test is that the loop sees each one begin, reports it, and ends it at once. So none of
/// them waits: an hour-long sleep here returns within one turn of the loop. Were the loop to
/// miss one, nothing could end it and the body would be cancelled after the loop's
/// `offLoopTimeout` (the sleep then throws and the test fails), so no test waits without a
/// deadline either.
///
/// They live in this one file so that every real-clock sleep in the tests is in one place. The
/// loop reports a sleep at its first frame of the program, which is the line here; each input
/// keeps that line in a `…Line` constant for the tests that check it.
enum RealClockSleepInput {
    /// Where the loop's report places these sleeps.
    static let file = "Tests/RunLoopTestingTests/VirtualLoop/RealClockSleepInputs.swift"

    /// `Task.sleep(for:)`, which sleeps on `ContinuousClock`.
    static func onContinuousClock(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
    static let onContinuousClockLine = #line - 2

    /// `SuspendingClock.sleep(for:)`.
    static func onSuspendingClock(for duration: Duration) async throws {
        try await SuspendingClock().sleep(for: duration)
    }
    static let onSuspendingClockLine = #line - 2

    /// `Task.sleep(nanoseconds:)`, the oldest spelling (also `ContinuousClock`).
    static func nanoseconds(_ nanoseconds: UInt64) async throws {
        try await Task.sleep(nanoseconds: nanoseconds)
    }
    static let nanosecondsLine = #line - 2

    /// RunLoopKit's own `MonotonicClock`, which sleeps on `SuspendingClock`.
    static func onMonotonicClock(for duration: Duration) async throws {
        try await MonotonicClock.shared.sleep(for: duration)
    }
    static let onMonotonicClockLine = #line - 2

    /// A sleep until a deadline one second in the past: it returns without suspending.
    static func untilAPastDeadline() async throws {
        try await Task.sleep(until: .now - .seconds(1), clock: .continuous)
    }

    /// A common polling helper, on a real clock, in a nonisolated function (no hop between its
    /// sleeps): sleeps until `isDone` holds, `maxPolls` times at most, and returns how many times
    /// it slept. Each sleep is an hour, not a poll's usual few milliseconds: the loop does not
    /// report a sleep whose deadline passed before it saw the sleep begin, and on a loaded
    /// machine 10 ms passed there once in 1,000 runs.
    static func poll(until isDone: @Sendable () -> Bool, maxPolls: Int) async -> Int {
        var polls = 0
        while !isDone() && polls < maxPolls {
            try? await onContinuousClock(for: .seconds(3600))
            polls += 1
        }
        return polls
    }
}
