import RunLoopCore
import Testing
import UVHost

/// libuv hosts a Loop through the core's hosted run: the same trace as the loop's own run, and
/// an idle run that libuv sleeps through.
@Suite("LoopOnLibuv")
struct LoopOnLibuvTests {
    /// A timer that signals a source on the loop's thread; every activity and callout logged.
    static func trace(hosted: Bool) throws -> (lines: [String], outcome: LoopOnLibuv.Outcome?) {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        final class Log { var lines: [String] = [] }
        // The callouts run on this thread; LoopBound checks that and makes the log Sendable.
        let log = LoopBound(Log(), loop: loop)
        let observer = LoopObserver(activities: .allActivities, label: "activities") { _, activity in
            log.value.lines.append(activity.shortName)
        }
        let source = LoopSource(label: "source") { log.value.lines.append("source") }
        let timer = try LoopTimer(fireAt: loop.clock.now.advanced(by: .milliseconds(10)), label: "timer") { _ in
            log.value.lines.append("timer")
            source.signal()
        }
        loop.add(observer, mode: .default)
        loop.add(source, mode: .default)
        loop.add(timer, mode: .default)
        defer {
            observer.invalidate()
            source.invalidate()
            timer.invalidate()
        }
        if hosted {
            let outcome = try LoopOnLibuv.run(loop, timeout: .seconds(5), returnAfterSourceHandled: true)
            return (log.value.lines, outcome)
        }
        _ = loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true)
        return (log.value.lines, nil)
    }

    @Test("A timer and the source it signals: the same activities and callouts hosted in libuv as in the loop's own run")
    func sameTraceAsNative() throws {
        let native = try Self.trace(hosted: false)
        #expect(native.lines == ["E", "BT", "BS", "BW", "AW", "timer", "BT", "BS", "source", "X"])
        let hosted = try Self.trace(hosted: true)
        #expect(hosted.lines == native.lines)
        #expect(hosted.outcome?.result == .handledSource)
        // libuv slept once, for the timer.
        #expect(hosted.outcome?.sleeps == 1, "\(String(describing: hosted.outcome))")
    }

    @Test("An idle run: libuv sleeps until the run's timeout, with nothing in between")
    func idleRunSleepsOnce() throws {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let keeper = LoopSource(label: "keeps the mode") {}
        loop.add(keeper, mode: .default)
        defer { keeper.invalidate() }
        let start = loop.clock.now
        let outcome = try LoopOnLibuv.run(loop, timeout: .milliseconds(30))
        #expect(outcome.result == .timedOut)
        #expect(start.duration(to: loop.clock.now) >= .milliseconds(30))
        // One sleep to the deadline; a second only if libuv woke a little early (its clock is
        // in milliseconds) — never a spin.
        #expect(outcome.sleeps <= 2 && outcome.iterations <= 3, "\(outcome)")
    }

    @Test("A virtual clock is refused")
    func virtualClockRefused() {
        let loop = Loop(clock: VirtualClock())
        defer { loop.tearDown() }
        #expect(throws: LoopOnLibuv.Failure.virtualClock) { try LoopOnLibuv.run(loop, timeout: .zero) }
    }
}
