@_exported import LoopTime
import CRunLoopShims
import Synchronization

/// The time source of a ``Loop``: real monotonic time (``MonotonicClock``) or a
/// ``VirtualClock`` whose waits jump instead of sleeping.
///
/// A loop clock is a Swift `Clock` with ``LoopInstant`` instants and `Duration` durations, so
/// `Task.sleep(for:clock:)` and `clock.sleep(for:)` work on both kinds.
///
/// A loop may read `now` with its own lock held, so a clock of your own must answer `now`
/// without calling into a loop (a counter or a read of a time source is fine).
///
/// ```swift
/// let clock = VirtualClock()
/// let loop = Loop(clock: clock)
/// print(loop.clock.now)   // "0 ns"
/// ```
public protocol LoopClock: Clock, AnyObject where Instant == LoopInstant, Duration == Swift.Duration {
    /// True when waits jump time instead of sleeping.
    var isVirtual: Bool { get }
}

/// `CLOCK_MONOTONIC`, the clock CF uses on Linux (X2).
///
/// ```swift
/// let start = MonotonicClock.shared.now
/// let elapsed = start.duration(to: MonotonicClock.shared.now)
/// ```
public final class MonotonicClock: LoopClock {
    /// The process-wide instance.
    public static let shared = MonotonicClock()
    private init() {}

    public var now: LoopInstant { LoopInstant(nanoseconds: rlk_monotonic_ns()) }
    public var isVirtual: Bool { false }
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Suspends the task until `deadline` on this clock (the suspending clock does the waiting:
    /// on Linux both read `CLOCK_MONOTONIC`).
    public func sleep(until deadline: LoopInstant, tolerance: Duration? = nil) async throws {
        let remaining = now.duration(to: deadline)
        guard remaining > .zero else {
            try Task.checkCancellation()
            return
        }
        try await Task.sleep(for: remaining, tolerance: tolerance, clock: .suspending)
    }
}

/// A clock that only moves when told to or when a loop waits.
///
/// A loop on a virtual clock never sleeps for time: a wait first polls its descriptors with a
/// zero timeout, then jumps `now` to the next deadline (a timer or the run timeout). Only when
/// there is no deadline at all does it block, on the real descriptors (wake-ups, ports, fds).
/// Tasks sleeping on the clock resume when it reaches their deadline, in deadline order.
///
/// ``advance(by:)`` resumes every due sleeper at once; where their tasks then run (the global
/// concurrent executor, usually) decides the order in which they go on. For a test of several
/// tasks, RunLoopTesting's `withVirtualLoop` runs them on one loop and resumes them one at a
/// time, each running until it waits before the next.
///
/// ```swift
/// let clock = VirtualClock()
/// clock.advance(by: .milliseconds(75))   // simulate 75 ms of work inside a callout
/// ```
public final class VirtualClock: LoopClock {
    fileprivate let current: Atomic<UInt64>
    let sleepers = VirtualSleepers()

    /// Creates a clock reading `start`.
    public init(start: LoopInstant = .zero) { current = Atomic(start.nanoseconds) }

    public var now: LoopInstant { LoopInstant(nanoseconds: nowNanoseconds) }
    public var isVirtual: Bool { true }
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// The current reading in nanoseconds (the loop's internal unit).
    var nowNanoseconds: UInt64 { current.load(ordering: .acquiring) }

    /// Moves time forward by `duration`; a negative duration throws and leaves time unchanged.
    ///
    /// ```swift
    /// try clock.advance(by: .seconds(1))
    /// ```
    public func advance(by duration: Duration) throws(LoopError) {
        guard duration >= .zero else { throw LoopError.negativeDuration(duration, what: "VirtualClock.advance(by:)") }
        let step = Nanoseconds.from(duration)
        let reached = current.wrappingAdd(step, ordering: .acquiringAndReleasing).newValue
        sleepers.resume(upTo: reached)
    }

    /// Moves time forward by `seconds`, a thin convenience over ``advance(by:)``: negative or
    /// NaN values are ignored, as a clock cannot go back.
    public func advance(seconds: Double) {
        guard seconds > 0 else { return }
        let step = Nanoseconds.from(seconds: seconds)
        let reached = current.wrappingAdd(step, ordering: .acquiringAndReleasing).newValue
        sleepers.resume(upTo: reached)
    }

    /// Moves time forward to `instant` if it is later than `now`.
    public func advance(to instant: LoopInstant) { advance(toNanoseconds: instant.nanoseconds) }

    /// Moves time forward to `instant` nanoseconds if later than now (a wait's jump).
    func advance(toNanoseconds instant: UInt64) {
        move(toNanoseconds: instant)
        sleepers.resume(upTo: nowNanoseconds)
    }

    /// Suspends the task until the clock is advanced to `deadline` (at once if it is there
    /// already). Cancelling the task resumes it at once with `CancellationError`, and nothing
    /// stays registered. This is the clock's `sleep(until:tolerance:)`, under the name a test
    /// reads as "waits for virtual time", not "sleeps".
    ///
    /// ```swift
    /// let waiter = Task { try await clock.wait(until: clock.now.advanced(by: .seconds(5))) }
    /// try clock.advance(by: .seconds(5))   // the waiter resumes
    /// ```
    public func wait(until deadline: LoopInstant) async throws {
        try await sleepers.sleep(until: deadline.nanoseconds, clockNow: { self.nowNanoseconds })
    }

    /// ``wait(until:)`` at `duration` after now.
    public func wait(for duration: Duration) async throws {
        try await wait(until: now.advanced(by: duration))
    }

    /// `Clock`'s suspension: the same as ``wait(until:)``.
    public func sleep(until deadline: LoopInstant, tolerance: Duration? = nil) async throws {
        try await wait(until: deadline)
    }

    /// How many tasks are sleeping on this clock (tests: a cancelled sleep leaves none).
    public var sleepingTaskCount: Int { sleepers.count }
}

// MARK: Stepping, for a test driver (RunLoopTesting's virtual-loop test)

extension VirtualClock {
    /// Moves time forward to `instant` nanoseconds if later than now, resuming nobody: the
    /// caller resumes the sleepers due one at a time (`resumeFirstSleeper(dueBy:)`).
    package func move(toNanoseconds instant: UInt64) {
        var seen = current.load(ordering: .acquiring)
        while seen < instant {
            let (exchanged, original) = current.compareExchange(
                expected: seen, desired: instant, ordering: .acquiringAndReleasing)
            if exchanged { return }
            seen = original
        }
    }

    /// The earliest deadline a task sleeps until, or nil when none sleeps.
    package var nextSleeperDeadline: UInt64? { sleepers.nextDeadline }

    /// Resumes the one sleeper that comes first (deadline order, ties in the order the sleeps
    /// began) if it is due by `instant`; what it was, or nil when none is.
    package func resumeFirstSleeper(dueBy instant: UInt64) -> VirtualSleeperInfo? {
        sleepers.resumeFirst(dueBy: instant)
    }

    /// The sleeping tasks, in the order they would resume.
    package var sleeperInfos: [VirtualSleeperInfo] { sleepers.infos }

    /// Resumes every sleeping task with `CancellationError`; what they were.
    package func cancelSleepers() -> [VirtualSleeperInfo] { sleepers.cancelAll() }
}

/// The `Double`-seconds conveniences: CF's reading of a number of seconds.
enum Seconds {
    /// A duration of `seconds`: negative as zero (CF clamps), beyond CF's interval limit clamped
    /// to it; NaN must be refused by the caller.
    static func duration(_ seconds: Double) -> Duration {
        LoopInstant.duration(nanoseconds: Nanoseconds.from(seconds: seconds))
    }
}

extension LoopClock {
    /// `now` in nanoseconds, the loop's internal unit.
    @inline(__always)
    var nowNanoseconds: UInt64 { now.nanoseconds }
}

/// A run's timeout in nanoseconds: 0 polls once (L2), `.max` never times out (X5).
struct RunTimeout {
    let nanoseconds: UInt64

    static var poll: RunTimeout { RunTimeout(nanoseconds: 0) }
    static var forever: RunTimeout { RunTimeout(nanoseconds: .max) }

    init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds > Nanoseconds.intervalLimit ? .max : nanoseconds
    }

    /// ≤ 0 polls; beyond CF's interval limit is forever.
    init(_ duration: Duration) { self.init(nanoseconds: Nanoseconds.from(duration)) }

    /// Seconds, not NaN: ≤ 0 polls; beyond CF's interval limit is forever.
    init(seconds: Double) {
        if seconds > Nanoseconds.intervalLimitSeconds {
            self.init(nanoseconds: .max)
        } else {
            self.init(nanoseconds: Nanoseconds.from(seconds: seconds))
        }
    }
}
