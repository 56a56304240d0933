import RunLoopKit
import Testing

@Suite("Commit observers on the loop")
struct LoopCommitObserverTests {
    /// A loop on a virtual clock with a pipeline on the same clock, current for `body`.
    private func withLoop(_ body: (Loop, VirtualClock, CommitPipeline, CalloutLog) -> Void) {
        let clock = VirtualClock()
        let loop = Loop(clock: clock)
        let log = CalloutLog()
        loop.eventSink = log
        let pipeline = CommitPipeline(clock: LoopTransactionClock(clock))
        pipeline.asCurrent { body(loop, clock, pipeline, log) }
        loop.tearDown()   // items capture the loop; teardown breaks those cycles
    }

    @Test("a source0 that leaves marks older than the budget ends with a forced commit")
    func flushIfTooLate() {
        withLoop { loop, clock, pipeline, log in
            let commits = LoopCommitObservers(installedOn: loop, pipeline: pipeline)
            let layer = Layer(name: "table")
            layer.onLayout = { _ in log.note("layout") }
            let slow = LoopSource(label: "buttonAction", onOwnerThreadOf: loop) {
                layer.setNeedsLayout()
                clock.advance(seconds: 0.020)   // the rest of the event handling takes 20 ms
            }
            loop.add(slow, mode: .default)
            slow.signal()
            loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true)
            #expect(log.callouts(excluding: ["transactionRunLevel"]) == ["buttonAction", "layout", "_beforeCACommitHandler",
                                                                          "CA::Transaction::observer_callback", "_afterCACommitHandler"])
            #expect(pipeline.frameLog?.frames.map(\.reason) == [.tooLate])
            commits.uninstall()
        }
    }

    @Test("a quick source0 leaves its marks for BeforeWaiting")
    func quickSourceWaitsForBeforeWaiting() {
        withLoop { loop, clock, pipeline, log in
            let commits = LoopCommitObservers(installedOn: loop, pipeline: pipeline)
            let layer = Layer(name: "table")
            layer.onLayout = { _ in log.note("layout") }
            let quick = LoopSource(label: "reload", onOwnerThreadOf: loop) {
                layer.setNeedsLayout()
                clock.advance(seconds: 0.005)
            }
            loop.add(quick, mode: .default)
            quick.signal()
            loop.run(mode: .default, timeout: 0.01)
            let layout = log.entries.firstIndex(of: "layout")!
            #expect(log.entries[..<layout].contains("BW"), "the layout waited for BeforeWaiting")
            #expect(pipeline.frameLog?.frames.map(\.reason) == [.beforeWaiting])
            commits.uninstall()
        }
    }

    @Test("marks made during display go to the next commit and wake the loop")
    func displayMarksWakeTheLoop() {
        withLoop { loop, clock, pipeline, log in
            let commits = LoopCommitObservers(installedOn: loop, pipeline: pipeline)
            let badge = Layer(name: "badge")
            badge.onDisplay = { _, _ in log.note("display badge") }
            let cell = Layer(name: "cell")
            cell.onDisplay = { _, _ in
                log.note("display cell")
                badge.setNeedsDisplay()
            }
            cell.setNeedsDisplay()
            // An idle source keeps the mode from being empty (R3: a run of an empty mode returns
            // Finished at once), so the loop really sleeps.
            loop.add(LoopSource(label: "idle") {}, mode: .default)
            let start = clock.now
            // Without the wake-up the second commit would wait for the 10 s timeout.
            loop.run(mode: .default, timeout: 10, returnAfterSourceHandled: false)
            let displays = log.entries.filter { $0.hasPrefix("display") }
            #expect(displays == ["display cell", "display badge"])
            #expect(pipeline.frameLog?.frames.count == 2)
            let secondCommit = pipeline.frameLog!.frames[1].startTime
            #expect(secondCommit == start, "the second commit came from the wake-up, not the timeout")
            commits.uninstall()
        }
    }

    @Test("a commit at a nested run's Exit does not run post-commit work of the outer level")
    func nestedExitKeepsOuterCleanup() {
        withLoop { loop, _, pipeline, log in
            loop.addCommonMode(.tracking)
            let commits = LoopCommitObservers(installedOn: loop, pipeline: pipeline)
            let layer = Layer(name: "v")
            layer.onLayout = { _ in log.note("layout") }
            let inner = LoopSource(label: "inner", onOwnerThreadOf: loop) { layer.setNeedsLayout() }
            let outer = LoopSource(label: "outer", onOwnerThreadOf: loop) {
                pipeline.addPostCommitCallback { log.note("outer cleanup") }
                inner.signal()
                loop.run(mode: .tracking, timeout: 0, returnAfterSourceHandled: true)
                log.note("nested run returned")
                layer.setNeedsLayout()   // so the outer Exit has something to commit
            }
            loop.add(outer, mode: .default)
            loop.add(inner, mode: .tracking)
            outer.signal()
            loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true)
            let notes = log.entries.filter { ["layout", "outer cleanup", "nested run returned"].contains($0) }
            #expect(notes == ["layout", "nested run returned", "layout", "outer cleanup"])
            commits.uninstall()
        }
    }

    @Test("TX6, the commit observer at order 2000000, on the loop: a mark at order 1000000 joins this commit, one at 0xFFFFFF the next")
    func observerOrderAroundTheCommit() {
        withLoop { loop, _, pipeline, _ in
            let commits = LoopCommitObservers(installedOn: loop, pipeline: pipeline)
            let early = Layer(name: "early")
            let late = Layer(name: "late")
            var marked = false
            let before = LoopObserver(activities: .beforeWaiting, repeats: false, order: 1_000_000, label: "early") { _, _ in
                early.setNeedsLayout()
            }
            let after = LoopObserver(activities: .beforeWaiting, repeats: false, order: 0xFF_FFFF, label: "late", onOwnerThreadOf: loop) { _, _ in
                late.setNeedsLayout()
                marked = true
            }
            loop.add(before, mode: .default)
            loop.add(after, mode: .default)
            loop.add(LoopSource(label: "idle") {}, mode: .default)
            loop.run(mode: .default, timeout: 0.05)
            let frames = pipeline.frameLog?.frames ?? []
            #expect(marked)
            #expect(frames.map { $0.laidOut.map(\.name) } == [["early"], ["late"]])
            // Nothing woke the loop for the late mark: it waited for the run's Exit commit.
            #expect(frames.map(\.reason) == [.beforeWaiting, .exit])
            commits.uninstall()
        }
    }
}
