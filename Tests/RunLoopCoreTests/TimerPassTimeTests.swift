import Testing
@testable import RunLoopCore

/// How precisely a timer pass reads the clock (`TimerPassTime.swift`): the grid of T5's
/// catch-up, the rules that let a coarse reading stand in for the exact time, the frontier the
/// collection reports, and passes on the real clock that take the coarse path.
@Suite("TimerPassTime")
struct TimerPassTimeTests {
    @Test("T5 the next date is the first grid date after now: missed ticks skipped, saturating at the end of time")
    func grid() {
        #expect(TimerGrid.next(after: 105, from: 100, interval: 10) == 110)      // no tick missed
        #expect(TimerGrid.next(after: 110, from: 100, interval: 10) == 120)      // a date equal to now has passed
        #expect(TimerGrid.next(after: 145, from: 100, interval: 10) == 150)      // 110–140 skipped
        #expect(TimerGrid.next(after: 90, from: 100, interval: 10) == 110)       // fired early: one interval on
        #expect(TimerGrid.next(after: .max - 1, from: 0, interval: .max / 2) == .max)
        #expect(TimerGrid.next(after: 5, from: .max - 3, interval: 10) == .max)
    }

    /// Whatever the exact time in [reading, reading + margin), a coarse reading that decides
    /// the next grid date (`TimerPassTime.decides`, the rule `nextGridDate` uses) gives the exact
    /// time's next date. Seeded, so a failure repeats.
    @Test("T5 a reading that decides the next date gives what the exact time gives, for every time within the margin")
    func lowerReadingDecides() {
        let margin = CoarseMonotonicTime.margin
        var random = ScaleStructureTests.SplitMix(state: 0x5EED_7135)
        func draw(_ bound: UInt64) -> UInt64 { UInt64(random.next(Int(bound))) }
        var decided = 0, undecided = 0
        for _ in 0..<200_000 {
            let interval = 1 + draw(5 * margin)
            let old = draw(1_000 * margin)
            let reading = old + draw(20 * margin)
            let exact = reading + draw(margin)
            let next = TimerGrid.next(after: reading, from: old, interval: interval)
            if TimerPassTime.coarse(reading).decides(next) {
                decided += 1
                #expect(next == TimerGrid.next(after: exact, from: old, interval: interval),
                        "old \(old) interval \(interval) reading \(reading) exact \(exact)")
            } else {
                undecided += 1
            }
        }
        // Both answers occur, so the property was checked where it matters.
        #expect(decided > 10_000 && undecided > 10_000)
        // An interval shorter than the margin never decides: the next date is within it.
        #expect(!TimerPassTime.coarse(1_000).decides(TimerGrid.next(after: 1_000, from: 0, interval: margin - 1)))
        // From a grid date, an interval of exactly the margin does: the next date is the same for all.
        #expect(TimerPassTime.coarse(margin).decides(TimerGrid.next(after: margin, from: 0, interval: margin)))
    }

    /// On the monotonic clock, a timer whose interval clears the coarse clock's margin takes
    /// the coarse path; its next date must still be the first grid date after its callout
    /// ended. Checked against readings taken around the pass, so a slow machine cannot fail it.
    @Test("T5 on the real clock a long-interval timer that fell behind lands on the first grid date after its callout")
    func realClockLongInterval() throws {
        let loop = try Loop.make(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let interval: UInt64 = 4_000_000_000   // beyond the coarse clock's margin
        let now = MonotonicClock.shared.now.nanoseconds
        try #require(now > 9_000_000_000, "the monotonic clock starts at boot; this host booted less than 9 s ago")
        let first = now - 9_000_000_000         // ticks at first + 4 s and + 8 s are already past
        var calloutTime: UInt64 = 0
        let timer = try LoopTimer(fireAt: LoopInstant(nanoseconds: first), interval: .nanoseconds(Int64(interval)),
                                  label: "behind", loop.ownerThreadCallout { _ in
            calloutTime = MonotonicClock.shared.now.nanoseconds
        })
        loop.add(timer, mode: .default)
        loop.run(mode: .default, timeout: 0)
        let after = MonotonicClock.shared.now.nanoseconds
        let next = timer.nextFireDate.nanoseconds
        try #require(calloutTime != 0, "the timer did not fire")
        #expect((next - first) % interval == 0, "off the grid: \(next - first) ns after the first date")
        #expect(next > calloutTime, "a date at or before the callout's own reading")
        #expect(next - interval <= after, "a grid date was skipped that had not passed when the pass ended")
        timer.invalidate()
    }

    @Test("T5 a date set in the callout stands, on the real clock, whatever the interval")
    func realClockDateSetInCallout() throws {
        let loop = try Loop.make(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let now = MonotonicClock.shared.now.nanoseconds
        let chosen = LoopInstant(nanoseconds: now + 7_777_000_000)
        let timer = try LoopTimer(fireAt: LoopInstant(nanoseconds: now), interval: .seconds(3600), label: "set") { timer in
            timer.setNextFireDate(chosen)
        }
        loop.add(timer, mode: .default)
        loop.run(mode: .default, timeout: 0)
        #expect(timer.nextFireDate == chosen)
        timer.invalidate()
    }

    @Test("T4 a coarse reading decides dates at or below it and a margin or more above it, and no others")
    func coarseDecides() {
        let margin = CoarseMonotonicTime.margin
        let coarse = TimerPassTime.coarse(5_000_000_000)
        #expect(coarse.decides(5_000_000_000) && coarse.decides(1) && coarse.decides(5_000_000_000 + margin))
        #expect(!coarse.decides(5_000_000_001) && !coarse.decides(5_000_000_000 + margin - 1))
        #expect(coarse.decides(.max))
        #expect(TimerPassTime.exact(5_000_000_000).decides(5_000_000_001))
    }

    @Test("T5 a date at or below the reading is due with no clock read; a later one reads the clock, and that reading stands")
    func isDueReadsOnlyForMovedDates() {
        var reads = 0
        var time = TimerPassTime.coarse(1_000)
        let atReading = time.isDue(1_000, readExact: { reads += 1; return 0 })
        #expect(atReading && reads == 0 && !time.isExact)
        let movedAndDue = time.isDue(1_500, readExact: { reads += 1; return 2_000 })
        #expect(movedAndDue && reads == 1 && time.isExact && time.reading == 2_000)
        let movedBeyond = time.isDue(2_500, readExact: { reads += 1; return 2_400 })
        #expect(!movedBeyond && reads == 2 && time.reading == 2_400)
        let atNewReading = time.isDue(2_400, readExact: { reads += 1; return 0 })
        #expect(atNewReading && reads == 2)
    }

    /// A queue of random dates, some timers firing (not eligible): the collection takes every
    /// eligible timer at or before `now`, in date order, and reports the earliest date after it.
    @Test("T4 collecting reports the earliest date after now, over the whole heap", arguments: [1, 2, 3])
    func collectionReportsFrontier(seed: Int) throws {
        let loop = try Loop.make(clock: VirtualClock())
        defer { loop.tearDown() }
        let state = try #require(loop.lock.withLock { loop.modeState(.default, create: true, $0) })
        var random = ScaleStructureTests.SplitMix(state: UInt64(seed))
        var queue = TimerQueue()
        var timers: [(timer: LoopTimer, slot: TimerSlot, date: UInt64)] = []
        for index in 0..<300 {
            let date = UInt64(random.next(1_000))
            let timer = try LoopTimer(fireAt: LoopInstant(nanoseconds: date), label: "t\(index)") { _ in }
            timer.firing = random.next(10) == 0
            let slot = TimerSlot(loopID: loop.identity, mode: state)
            queue.insert(timer, date: date, tolerance: 0, slot: slot)
            timers.append((timer, slot, date))
        }
        for now in [UInt64(0), 1, 250, 500, 998, 999, 1_000] {
            var due: [DueTimer] = []
            let beyond = queue.collectDue(now: now, into: &due)
            #expect(beyond == timers.map(\.date).filter { $0 > now }.min() ?? .max, "now \(now)")
            let expected = timers.filter { $0.date <= now && !$0.timer.firing }.map(\.date).sorted()
            #expect(due.map(\.date) == expected, "now \(now)")
        }
        for entry in timers { entry.timer.firing = false }
    }

    /// A timer long due (so the poll may ask the coarse clock) beside one dated at an exact
    /// reading taken just before the pass (almost always above the coarse reading, so the
    /// collection must fall back to the exact clock): one pass fires both, in date order.
    @Test("T4 on the real clock a pass that may judge by the coarse clock still fires every timer due at the exact time", arguments: 0..<20)
    func realClockCoarsePassFiresEveryDueTimer(round: Int) throws {
        let loop = try Loop.make(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        var fired: [String] = []
        let warmUp = try LoopTimer(fireAt: MonotonicClock.shared.now, label: "warm-up",
                                   loop.ownerThreadCallout { _ in fired.append("warm-up") })
        loop.add(warmUp, mode: .default)
        loop.run(mode: .default, timeout: 0)   // an exact reading, after which the next timer counts as long due
        let longDue = try LoopTimer(fireAt: LoopInstant(nanoseconds: 1), label: "long due",
                                    loop.ownerThreadCallout { _ in fired.append("long due") })
        let justDue = try LoopTimer(fireAt: MonotonicClock.shared.now, label: "just due",
                                    loop.ownerThreadCallout { _ in fired.append("just due") })
        loop.add(longDue, mode: .default)
        loop.add(justDue, mode: .default)
        loop.run(mode: .default, timeout: 0)
        #expect(fired == ["warm-up", "long due", "just due"])
    }

    /// An earlier callout moves the next due timer to a reading it takes itself, later than the
    /// pass's: as in CF, which reads the clock for each timer, that timer still fires in the pass.
    @Test("T5 a due timer an earlier callout moves to the present fires in the same pass, by a fresh reading")
    func movedToThePresentFires() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        var fired: [String] = []
        let second = try LoopTimer(fireAt: at(ms: 10), label: "second", loop.ownerThreadCallout { _ in fired.append("second") })
        let first = try LoopTimer(fireAt: at(ms: 5), label: "first", loop.ownerThreadCallout { _ in
            fired.append("first")
            clock.advance(ms: 20)                        // the callout takes 20 ms
            second.setNextFireDate(clock.now)            // 30 ms: after the pass's reading, not after now
        })
        loop.add(first, mode: .default)
        loop.add(second, mode: .default)
        clock.advance(ms: 10)
        loop.run(mode: .default, timeout: 0)
        #expect(fired == ["first", "second"])
    }
}
