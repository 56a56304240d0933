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

    @Test("a task sleeping on a VirtualClock resumes when the clock reaches its deadline")
    func sleeperResumesOnAdvance() async throws {
        let clock = VirtualClock()
        // `Task.immediate` runs the task up to its first suspension before returning: the sleep
        // has registered on the clock by then, with nothing to wait for.
        let sleeper = Task.immediate { try await clock.sleep(for: .seconds(5)) }
        try #require(clock.sleepingTaskCount == 1, "the sleeper did not register on the clock")
        try clock.advance(by: .seconds(4))
        #expect(clock.sleepingTaskCount == 1)   // not due yet
        try clock.advance(by: .seconds(1))
        try await sleeper.value
        #expect(clock.sleepingTaskCount == 0)
        #expect(clock.now == at(ms: 5_000))
        // A deadline already reached returns at once.
        try await clock.sleep(until: at(ms: 1_000), tolerance: nil)
    }

    @Test("a cancelled sleep throws CancellationError and leaves no sleeper behind")
    func cancelledSleep() async throws {
        let clock = VirtualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleepingTaskCount == 0)

        // Cancelled after registering, too.
        let late = Task.immediate { try await clock.sleep(for: .seconds(60)) }
        try #require(clock.sleepingTaskCount == 1, "the sleeper did not register on the clock")
        late.cancel()
        await #expect(throws: CancellationError.self) { try await late.value }
        #expect(clock.sleepingTaskCount == 0)
        #expect(clock.now == .zero)
    }

    @Test("sleepers resume in deadline order as one advance passes several deadlines")
    func sleepersInOrder() async throws {
        let clock = VirtualClock()
        let order = Trace()
        let tasks = [3, 1, 2].map { seconds in
            Task.immediate {
                try await clock.sleep(for: .seconds(seconds))
                order.add("\(seconds)")
            }
        }
        try #require(clock.sleepingTaskCount == 3, "the sleepers did not register on the clock")
        try clock.advance(by: .seconds(10))
        for task in tasks { try await task.value }
        #expect(Set(order.all) == ["1", "2", "3"])
        #expect(clock.sleepingTaskCount == 0)
    }
}
