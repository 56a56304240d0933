import RunLoopKit
import Runtime

/// A sleep on a real clock (`Task.sleep` on `ContinuousClock` or `SuspendingClock`) that a
/// virtual-loop test's code began on the test's thread, seen at the moment it began, with the
/// stack that began it (kept unsymbolicated until a failure is written).
struct RealClockSleep: Sendable {
    /// The clock's type: "ContinuousClock", "SuspendingClock".
    let clock: String
    /// How long it was to last (see ``init(clock:remaining:backtrace:)``); nil for a clock whose
    /// durations are not `Duration`s.
    let duration: Duration?
    let backtrace: Backtrace?

    /// - Parameters:
    ///   - clock: the clock's type name.
    ///   - remaining: the time from the clock's reading to the deadline. The clock is read a few
    ///     microseconds after the sleep computed its deadline, so this is a little short of what
    ///     the code asked for: three significant digits give the asked length back ("3600.0
    ///     seconds" for an hour) unless the two readings are far apart.
    ///   - backtrace: the stack of the thread that began the sleep.
    init(clock: String, remaining: Duration?, backtrace: Backtrace?) {
        self.clock = clock
        duration = remaining.map(Self.roundedToThreeDigits)
        self.backtrace = backtrace
    }

    /// One line for a failure's details: which clock, how long, where the program began it.
    func describe(finding places: StartingPlaces) -> String {
        let length = duration.map { " for about \($0)" } ?? ""
        let from = places.place(in: backtrace).map { "at \($0)" } ?? "with no frame of the program on the stack"
        return "a sleep on \(clock)\(length), \(from)"
    }

    private static func roundedToThreeDigits(_ duration: Duration) -> Duration {
        let nanoseconds = Nanoseconds.from(duration)
        var scale: UInt64 = 1
        while nanoseconds / scale >= 1000 { scale *= 10 }
        let (halfUp, overflow) = nanoseconds.addingReportingOverflow(scale / 2)
        return .nanoseconds(overflow ? nanoseconds : halfUp / scale * scale)
    }
}

/// The sleeps on a real clock of one test: the first ``keptLimit`` with their stacks, in the
/// order they began, and how many there were in all.
struct RealClockSleeps: Sendable {
    /// Enough to show where a test sleeps; a test that polls with a sleep would otherwise keep
    /// a stack for every turn of its loop.
    static let keptLimit = 16

    private(set) var kept: [RealClockSleep] = []
    private(set) var count = 0

    /// Those counted and not kept.
    var notKept: Int { count - kept.count }

    /// Counts one more sleep, and keeps it, made by `sleep`, while fewer than ``keptLimit`` are.
    mutating func add(_ sleep: () -> RealClockSleep) {
        count += 1
        if kept.count < Self.keptLimit { kept.append(sleep()) }
    }
}
