import Testing
@testable import RunLoopCore

/// `LoopInstant` arithmetic, `LoopError` for negative durations, and tasks sleeping on a
/// `VirtualClock`.
@Suite("TypedTime")
struct TypedTimeTests {
    @Test("LoopInstant arithmetic saturates at the origin and at distantFuture")
    func instantSaturation() {
        let instant = LoopInstant(nanoseconds: 5)
        #expect(instant.advanced(by: .nanoseconds(-10)) == .zero)
        #expect(LoopInstant.zero.advanced(by: .seconds(-1)) == .zero)
        #expect(LoopInstant.distantFuture.advanced(by: .nanoseconds(1)) == .distantFuture)
        #expect(LoopInstant(nanoseconds: .max - 1).advanced(by: .seconds(1)) == .distantFuture)
        #expect(LoopInstant.zero.advanced(by: .seconds(Int64.max)) == .distantFuture)
        #expect(instant.advanced(by: .milliseconds(2)) == LoopInstant(nanoseconds: 2_000_005))
    }

    @Test("LoopInstant durations are signed and exact; instants compare and print readably")
    func instantDurations() {
        let a = at(ms: 20)
        let b = at(ms: 5)
        #expect(b.duration(to: a) == .milliseconds(15))
        #expect(a.duration(to: b) == .milliseconds(-15))
        #expect(LoopInstant.zero.duration(to: .distantFuture) == .nanoseconds(Int64(UInt64.max / 1_000_000_000)) * 1_000_000_000 + .nanoseconds(Int64(UInt64.max % 1_000_000_000)))
        #expect(b < a && LoopInstant.zero < b && a < .distantFuture)
        #expect(b.advanced(by: b.duration(to: a)) == a)
        #expect("\(LoopInstant.zero)" == "0 ns" && "\(at(ms: 12))" == "12 ms" && "\(at(ms: 3_000))" == "3 s")
        #expect("\(LoopInstant.distantFuture)" == "never")
    }

    @Test("negative durations throw LoopError.negativeDuration and change nothing")
    func negativeDurations() throws {
        let clock = VirtualClock(start: at(ms: 7))
        #expect(throws: LoopError.negativeDuration(.milliseconds(-1), what: "VirtualClock.advance(by:)")) {
            try clock.advance(by: .milliseconds(-1))
        }
        #expect(clock.now == at(ms: 7))
        try clock.advance(by: .zero)
        #expect(clock.now == at(ms: 7))
        #expect(throws: LoopError.negativeDuration(.milliseconds(-2), what: "LoopTimer interval")) {
            _ = try LoopTimer(after: .milliseconds(1), clock: clock, interval: .milliseconds(-2)) { _ in }
        }
        #expect(throws: LoopError.negativeDuration(.milliseconds(-3), what: "LoopTimer tolerance")) {
            _ = try LoopTimer(after: .milliseconds(1), clock: clock, tolerance: .milliseconds(-3)) { _ in }
        }
        let error = LoopError.negativeDuration(.seconds(-1), what: "LoopTimer interval")
        #expect(error.description.contains("LoopTimer interval is negative"))
        // Intervals beyond CF's limit (about 16 years) are clamped to it (T1).
        let long = try LoopTimer(fireAt: .zero, interval: .seconds(1_000_000_000)) { _ in }
        #expect(long.interval == .seconds(504_911_232))
    }

    @Test("the Double conveniences read seconds like CF")
    func doubleConveniences() throws {
        let clock = VirtualClock(start: at(ms: 1_000))
        let timer = try LoopTimer(after: 0.25, clock: clock, interval: 0.5, tolerance: 0.1) { _ in }
        #expect(timer.nextFireDate == at(ms: 1_250))
        #expect(timer.interval == .milliseconds(500) && timer.tolerance == .milliseconds(100))
        clock.advance(seconds: 1.5)
        #expect(clock.now == at(ms: 2_500))
        clock.advance(to: at(ms: 3_000))
        #expect(clock.now == at(ms: 3_000))
    }

    @Test("a task sleeping on a VirtualClock resumes when the virtualClock reaches its deadline")
    func sleeperResumesOnAdvance() async throws {
        let virtualClock = VirtualClock()
        // `Task.immediate` runs the task up to its first suspension before returning: the wait
        // has registered on the virtualClock by then, with nothing to wait for.
        let sleeper = Task.immediate { try await virtualClock.wait(for: .seconds(5)) }
        try #require(virtualClock.sleepingTaskCount == 1, "the sleeper did not register on the clock")
        try virtualClock.advance(by: .seconds(4))
        #expect(virtualClock.sleepingTaskCount == 1)   // not due yet
        try virtualClock.advance(by: .seconds(1))
        try await sleeper.value
        #expect(virtualClock.sleepingTaskCount == 0)
        #expect(virtualClock.now == at(ms: 5_000))
        // A deadline already reached returns at once.
        try await virtualClock.wait(until: at(ms: 1_000))
    }

    @Test("a cancelled sleep throws CancellationError and leaves no sleeper behind")
    func cancelledSleep() async throws {
        let virtualClock = VirtualClock()
        let sleeper = Task { try await virtualClock.wait(for: .seconds(60)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(virtualClock.sleepingTaskCount == 0)

        // Cancelled after registering, too.
        let late = Task.immediate { try await virtualClock.wait(for: .seconds(60)) }
        try #require(virtualClock.sleepingTaskCount == 1, "the sleeper did not register on the clock")
        late.cancel()
        await #expect(throws: CancellationError.self) { try await late.value }
        #expect(virtualClock.sleepingTaskCount == 0)
        #expect(virtualClock.now == .zero)
    }

    @Test("one advance past several deadlines resumes every sleeper, each once")
    func everySleeperResumesOnce() async throws {
        let virtualClock = VirtualClock()
        let resumed = Trace()
        let tasks = [3, 1, 2].map { seconds in
            Task.immediate {
                try await virtualClock.wait(for: .seconds(seconds))
                resumed.add("\(seconds)")
            }
        }
        try #require(virtualClock.sleepingTaskCount == 3, "the sleepers did not register on the clock")
        try virtualClock.advance(by: .seconds(10))
        for task in tasks { try await task.value }
        // They resume on the cooperative pool, in no fixed order; each exactly once.
        #expect(resumed.all.sorted() == ["1", "2", "3"])
        #expect(virtualClock.sleepingTaskCount == 0)
    }
}
