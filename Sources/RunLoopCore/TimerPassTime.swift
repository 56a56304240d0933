import CRunLoopShims

// How precisely a timer pass reads the clock. An exact reading (CLOCK_MONOTONIC through the
// vDSO) costs 22 ns on the Intel host; a pass that fires a re-armed timer took two, a fifth of
// its time. The coarse clock (CLOCK_MONOTONIC_COARSE, 5 ns) is the exact time as of the kernel's
// last tick: never ahead of it, and behind it by less than `CoarseMonotonicTime.margin`. A
// coarse reading L stands in for the exact time E wherever every date compared with the time
// lies at or below L or at least a margin above it: each comparison then comes out as it would
// for E, so the pass does what an exact reading would have made it do. Where a date falls
// between, the pass reads the exact clock. Two places use it:
// - The quiet poll (`pollQuietly`) finds a timer due, and `doTimers` collects the due timers by
//   the coarse reading (`TimerPassTime`) when the earliest timer was already due at an earlier
//   exact reading of this loop (`lastTimerReading`): such a timer is long due, and the coarse
//   clock shows it. A timer that just became due is read exactly at once, with no coarse read
//   spent. The collection is the exact one when no timer is dated just above the reading.
// - T5's catch-up after a repeating timer's callout (`nextGridDate`).

/// The grid of a repeating timer: its first date plus whole intervals.
enum TimerGrid {
    /// The first grid date after `now`, for a timer last due at `old` (itself on the grid):
    /// `old + k·interval` with the smallest k ≥ 1 that passes `now`, so missed ticks are
    /// skipped. Saturates at `.max`. `interval` must not be 0.
    @inline(__always)
    static func next(after now: UInt64, from old: UInt64, interval: UInt64) -> UInt64 {
        let following = Nanoseconds.add(old, interval)
        if following > now { return following }   // no tick missed: no division (tens of cycles)
        let missed = (now - old) / interval + 1
        let (span, overflow) = missed.multipliedReportingOverflow(by: interval)
        return overflow ? .max : Nanoseconds.add(old, span)
    }
}

/// CLOCK_MONOTONIC_COARSE as a lower bound of the exact monotonic time.
enum CoarseMonotonicTime {
    /// How far the coarse clock may trail the exact one, with room to spare. The kernel moves
    /// the coarse clock at each tick (every 4 ms at 250 Hz) and, if the CPU that keeps time
    /// misses ticks, another CPU takes the duty over after a few; a second is far beyond both.
    static let margin: UInt64 = 1_000_000_000

    /// The coarse reading, or nil where the system has none.
    @inline(__always)
    static func read() -> UInt64? {
        let reading = rlk_monotonic_coarse_ns()
        return reading == 0 ? nil : reading
    }
}

/// The time a timer pass fires by (T4, T5): an exact clock reading, or a coarse one that
/// decides like the exact reading it stands for (see the top of this file).
struct TimerPassTime {
    /// The reading: the exact time, or a lower bound of it less than a margin below it.
    private(set) var reading: UInt64
    /// Whether `reading` is exact.
    private(set) var isExact: Bool

    static func exact(_ reading: UInt64) -> TimerPassTime { TimerPassTime(reading: reading, isExact: true) }
    static func coarse(_ reading: UInt64) -> TimerPassTime { TimerPassTime(reading: reading, isExact: false) }

    /// Whether the reading gives the comparison with `date` the exact time would give: it is
    /// exact, or the date is at or below it or a margin or more above it.
    @inline(__always)
    func decides(_ date: UInt64) -> Bool {
        isExact || date <= reading || date - reading >= CoarseMonotonicTime.margin
    }

    /// Whether a collected timer, dated `date` as its turn comes, is due (T5's first check). A
    /// date at or below the reading is. A later one, which an earlier callout of this pass set,
    /// is compared with the clock read again (`readExact`), as CF reads it for every timer it
    /// fires; that reading then stands for the rest of the pass.
    @inline(__always)
    mutating func isDue(_ date: UInt64, readExact: () -> UInt64) -> Bool {
        if date <= reading { return true }
        self = .exact(readExact())
        return date <= reading
    }
}

extension Loop {
    /// The quiet poll's question (L-b, T4): is the mode's earliest timer, armed at `armed`, due
    /// now? The time to fire by when it is, nil when not. The coarse clock answers only for a
    /// timer already due at an earlier reading of this loop, and only if it shows it due.
    /// Out of line: inlined, it made the quiet poll too large for the pass to inline the wait
    /// step, which cost every polling pass 47 instructions, timers or not (callgrind).
    @inline(never)
    func timerPassTime(ifDue armed: UInt64) -> TimerPassTime? {
        if usesMonotonicClock, armed <= owned.lastTimerReading,
           let coarse = CoarseMonotonicTime.read(), armed <= coarse {
            return .coarse(coarse)
        }
        let time = readTimerPassTime()
        return armed <= time.reading ? time : nil
    }

    /// An exact reading for a timer pass, kept for `timerPassTime`'s test.
    @inline(__always)
    func readTimerPassTime() -> TimerPassTime {
        let now = clockNanoseconds()
        owned.lastTimerReading = now
        return .exact(now)
    }

    /// T5's catch-up after the callout of a repeating `timer`, last due at `old` and fired at
    /// `limit` (a reading taken before its callout): the first grid date after the time the
    /// callout ended, or nil when the callout set a date (no time is needed then; only the
    /// pass firing the timer clears the flag, so a flag read set here is still set under the
    /// lock). On the monotonic clock the coarse reading (or `limit`, if later) stands in for
    /// that time when it decides the grid date (`TimerPassTime.decides`); otherwise the exact
    /// clock is read.
    @inline(__always)
    func nextGridDate(_ timer: LoopTimer, lastDue old: UInt64, firedAt limit: UInt64) -> UInt64? {
        if timer.rescheduledInCallout { return nil }
        let interval = timer.intervalNs
        // The next grid date is at most an interval past any reading, so an interval within
        // the margin could be decided only from a grid date exactly: the exact clock, unasked.
        if usesMonotonicClock, interval > CoarseMonotonicTime.margin, let coarse = CoarseMonotonicTime.read() {
            let time = TimerPassTime.coarse(max(limit, coarse))
            let next = TimerGrid.next(after: time.reading, from: old, interval: interval)
            if time.decides(next) { return next }
        }
        return TimerGrid.next(after: clockNanoseconds(), from: old, interval: interval)
    }
}
