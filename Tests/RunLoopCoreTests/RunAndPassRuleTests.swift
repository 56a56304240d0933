import Testing
import PThreads
import CRunLoopShims
import RunLoopDiagnostics
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// The run (R*) and pass (L*) rules of Docs/Rules.md, one test per rule id, on the virtual clock.
@Suite("RunSpecificRules")
struct RunSpecificRules {
    @Test("R1 running the common pseudo-mode returns .finished with a diagnostic each time")
    func r1() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let recorder = DiagnosticsRecorder(capturing: [.runCommonModes])
        let trace = Trace()
        recordActivities(loop, trace, mode: .common)
        loop.add(LoopSource {}, mode: .common)
        #expect(loop.run(mode: .common, timeout: 1) == .finished)
        #expect(loop.run(mode: Loop.Mode("kCFRunLoopCommonModes"), timeout: 1) == .finished)
        #expect(trace.all == [])
        // Parallel tests may add their own; these two runs report at least two.
        #expect(recorder.diagnostics(withID: .runCommonModes).count >= 2)
    }

    @Test("R2 a loop torn down at thread exit is finished and takes no items, blocks or work")
    func r2() {
        final class Holder: @unchecked Sendable { var loop: Loop? }  // written before join, read after
        let holder = Holder()
        runOnNewPThread {
            holder.loop = Loop.current
            holder.loop!.add(LoopSource {}, mode: .default)
        }
        let loop = holder.loop!
        #expect(loop.isFinished(mode: .default))
        let recorder = DiagnosticsRecorder(capturing: [.addRefused, .workAfterTeardown])
        let source = LoopSource(label: "r2-source") {}
        #expect(loop.add(source, mode: .default) == .refused(.loopTornDown))
        #expect(!loop.contains(source, mode: .default))
        #expect(recorder.diagnostics(withID: .addRefused, item: "r2-source").count == 1)
        #expect(!loop.perform(label: "r2-block") {})
        #expect(!loop.performAndWake(label: "r2-block-wake") {})
        #expect(!loop.submit(label: "r2-work") {})
        for label in ["r2-block", "r2-block-wake", "r2-work"] {
            #expect(recorder.diagnostics(withID: .workAfterTeardown, item: label).count == 1, "\(label)")
        }
        loop.wakeUp()  // no-op, no crash on the closed descriptor
    }

    @Test("R3 a missing or empty mode → .finished, no Entry/Exit, mode not created")
    func r3() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        #expect(loop.run(mode: "Missing", timeout: 1) == .finished)
        #expect(!loop.allModes.contains("Missing"))
        #expect(loop.run(mode: .default, timeout: 1) == .finished)
        #expect(trace.all == [])
    }

    @Test("R4 emptiness: sources0 (even idle), ports, fd sources, timers, matching blocks; not observers")
    func r4() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        loop.add(LoopObserver(activities: .allActivities) { _, _ in }, mode: .default)
        #expect(loop.isFinished(mode: .default))
        let idle = LoopSource {}
        loop.add(idle, mode: .default)
        #expect(!loop.isFinished(mode: .default))
        loop.remove(idle, mode: .default)
        let port = try LoopPortSource { _ in }
        loop.add(port, mode: .default)
        #expect(!loop.isFinished(mode: .default))
        loop.remove(port, mode: .default)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let file = LoopFileSource(fd: fds[0], events: .readable) { _ in }
        loop.add(file, mode: .default)
        #expect(!loop.isFinished(mode: .default))
        loop.remove(file, mode: .default)
        let timer = try LoopTimer(after: 1, clock: clock) { _ in }
        loop.add(timer, mode: .default)
        #expect(!loop.isFinished(mode: .default))
        loop.remove(timer, mode: .default)
        #expect(loop.isFinished(mode: .default))
        // R4e: a block for this mode, for .common when the mode is common, or a set containing it.
        loop.perform(inMode: "Elsewhere") {}
        #expect(loop.isFinished(mode: .default))
        loop.perform(inMode: .common) {}
        #expect(!loop.isFinished(mode: .default))
        #expect(loop.isFinished(mode: "Elsewhere") == false)
        loop.run(mode: .default, timeout: 0)
        #expect(loop.isFinished(mode: .default))
        loop.perform(inModes: ["A", .default]) {}
        #expect(!loop.isFinished(mode: .default))
    }

    @Test("R5 nested runs have their own stop flag; the outer mode is restored after")
    func r5() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        loop.add(LoopSource {}, mode: .default)
        let source = LoopSource(label: "outer") {
            trace.add("inner:\(loop.run(mode: .default, timeout: 0))")
            trace.add("mode:\(loop.currentMode?.name ?? "nil")")
        }
        let stopper = LoopSource(order: 1, label: "stopper") { loop.stop() }
        loop.add(source, mode: .default)
        loop.add(stopper, mode: "Other")
        loop.add(LoopSource(order: 2, label: "nest") {
            trace.add("other-inner:\(loop.run(mode: .default, timeout: 0))")
        }, mode: "Other")
        source.signal()
        #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["inner:timedOut", "mode:kCFRunLoopDefaultMode"])
        #expect(loop.currentMode == nil)
    }

    @Test("R6 run() repeats default-mode runs until stopped or finished")
    func r6() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        var fires = 0
        let timer = try LoopTimer(after: 1, clock: clock, interval: 1, loop.ownerThreadCallout { timer in
            fires += 1
            if fires == 3 { timer.invalidate() }  // the mode becomes empty → .finished ends run()
        })
        loop.add(timer, mode: .default)
        loop.run()
        #expect(fires == 3)
        #expect(clock.now == at(ms: 3_000))

        let stopper = try LoopTimer(after: 1, clock: clock, interval: 1) { _ in loop.stop() }
        loop.add(stopper, mode: .default)
        loop.run()
        #expect(stopper.isValid)
    }

    @Test("R7 isFinished and run(until:) (F2): returns early only when the default mode is finished")
    func r7() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        #expect(loop.isFinished(mode: .default))
        loop.run(until: at(ms: 5_000))
        #expect(clock.now == .zero)
        var fires = 0
        loop.add(try LoopTimer(after: 0.1, clock: clock, interval: 0.1, loop.ownerThreadCallout { _ in fires += 1 }), mode: .default)
        loop.run(until: at(ms: 1_000))
        #expect(clock.now == at(ms: 1_000))
        #expect(fires == 10)
    }
}

@Suite("PassRules")
struct PassRules {
    @Test("L0 a stop issued in an Entry observer ends the run before the first pass")
    func l0() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        loop.add(LoopSource {}, mode: .default)
        loop.add(LoopObserver(activities: .entry, order: -1) { _, _ in loop.stop() }, mode: .default)
        let passes = loop.passCount
        #expect(loop.run(mode: .default, timeout: 1) == .stopped)
        #expect(trace.all == ["E", "X"])
        #expect(loop.passCount == passes)
    }

    @Test("L1 the submit queue is not waited on in a non-common mode")
    func l1() {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let other: Loop.Mode = "Other"
        recordActivities(loop, trace, mode: other)
        loop.add(LoopSource {}, mode: other)
        loop.submit(label: "q") { trace.add("q") }
        #expect(loop.run(mode: other, timeout: 0.05) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "X"])
        #expect(clock.now == at(ms: 50))
        loop.addCommonMode(other)
        trace.reset()
        #expect(loop.run(mode: other, timeout: 0.05, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "q", "X"])
    }

    @Test("L1 a nested run inside the async drain neither services nor spins on queued work; the queue is served again afterwards")
    func l1NestedRunInsideDrain() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        // An idle port keeps the mode from being finished and makes every wait an epoll wait
        // (a mode without ports or fds waits without a system call).
        loop.add(try LoopPortSource(label: "idle") { _ in }, mode: .default)
        // First a run that services the queue, so its descriptor is in the default mode's set.
        loop.submit(label: "first") { trace.add("first") }
        #expect(loop.run(mode: .default, timeout: 0.5, returnAfterSourceHandled: true) == .handledSource)
        let nested = Trace()
        loop.submit(label: "outer") {
            trace.add("outer")
            // Queued work makes the async descriptor readable during the nested run.
            loop.submit(label: "inner") { trace.add("inner") }
            let passes = loop.passCount
            let start = clock.now
            nested.add("\(loop.run(mode: .default, timeout: 0.5))")
            // One sleeping pass that jumped to the timeout: no pass woke for the queue.
            nested.add("passes \(loop.passCount - passes)")
            nested.add("waited \(start.duration(to: clock.now))")
        }
        #expect(loop.run(mode: .default, timeout: 0.5, returnAfterSourceHandled: true) == .handledSource)
        #expect(nested.all == ["timedOut", "passes 1", "waited 0.5 seconds"])
        #expect(trace.all == ["first", "outer"])
        // The outer level serves the queue again: the descriptor is back in the set.
        let start = clock.now
        #expect(loop.run(mode: .default, timeout: 0.5, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["first", "outer", "inner"])
        #expect(clock.now == start)
    }

    @Test("L0 L1 are decided after Entry: an Entry observer that makes the mode common gets the async queue serviced in this run")
    func l1DecidedAfterEntry() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let other: Loop.Mode = "Other"
        loop.add(LoopSource {}, mode: other)
        loop.add(LoopObserver(activities: .entry, label: "entry") { _, _ in
            trace.add("E")
            loop.addCommonMode(other)
        }, mode: other)
        loop.submit(label: "q") { trace.add("q") }
        #expect(loop.run(mode: other, timeout: 0.5, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["E", "q"])
    }

    @Test("L2 timeouts: ≤ 0 polls once, beyond the interval limit (or infinity) waits for work")
    func l2() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        loop.add(try LoopTimer(after: 2, clock: clock) { _ in }, mode: .default)
        #expect(loop.run(mode: .default, timeout: -1) == .timedOut)
        #expect(clock.now == .zero)
        #expect(loop.run(mode: .default, timeout: .infinity) == .finished)
        #expect(clock.now == at(ms: 2_000))
        // The same with typed durations.
        loop.add(try LoopTimer(after: .seconds(2), clock: clock) { _ in }, mode: .default)
        #expect(loop.run(mode: .default, timeout: .seconds(-1)) == .timedOut)
        #expect(loop.run(mode: .default, timeout: .zero) == .timedOut)
        #expect(clock.now == at(ms: 2_000))
        #expect(loop.run(mode: .default, timeout: .seconds(600_000_000)) == .finished)
        #expect(clock.now == at(ms: 4_000))
    }

    @Test("L3 passCount counts passes: a source pass plus a sleeping pass")
    func l3() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let source = LoopSource {}
        loop.add(source, mode: .default)
        source.signal()
        let before = loop.passCount
        #expect(loop.run(mode: .default, timeout: 0.01) == .timedOut)
        #expect(loop.passCount - before == 2)
    }

    @Test("L-a BW/AW are skipped when polling (handled source0, timeout 0)")
    func la() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let source = recordingSource("perform", trace)
        loop.add(source, mode: .default)
        source.signal()
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "perform", "X"])
    }

    @Test("L-b a due timer fires only after the (polling) wait, never at BeforeTimers")
    func lb() throws {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        loop.add(LoopSource {}, mode: .default)
        loop.add(try LoopTimer(fireAt: .zero, label: "timer") { _ in trace.add("timer") }, mode: .default)
        try clock.advance(by: .milliseconds(5))
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "timer", "X"])
    }

    @Test("L-c one port event per pass: two ready ports take two polling runs")
    func lc() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let p1 = try LoopPortSource(label: "p1") { _ in trace.add("p1") }
        let p2 = try LoopPortSource(label: "p2") { _ in trace.add("p2") }
        loop.add(p1, mode: .default)
        loop.add(p2, mode: .default)
        try p1.send([1])
        try p2.send([2])
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        #expect(trace.all.count == 1)
        #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .handledSource)
        #expect(Set(trace.all) == ["p1", "p2"])
        #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .timedOut)
    }

    @Test("L-d blocks and timers are not 'handled'; ports and async work are")
    func ld() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        loop.add(LoopSource {}, mode: .default)
        loop.perform {}
        #expect(loop.run(mode: .default, timeout: 0.01, returnAfterSourceHandled: true) == .timedOut)
        loop.add(try LoopTimer(after: 0.001, clock: clock) { _ in }, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0.01, returnAfterSourceHandled: true) == .timedOut)
        let port = try LoopPortSource { _ in }
        loop.add(port, mode: .default)
        try port.send([0])
        #expect(loop.run(mode: .default, timeout: 0.01, returnAfterSourceHandled: true) == .handledSource)
    }

    @Test("L-e exit order: timed out before stopped")
    func le() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let source = LoopSource { loop.stop() }
        loop.add(source, mode: .default)
        source.signal()
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        source.signal()
        #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .handledSource)
    }

    @Test("L-f emptiness is checked after the wait: a mode emptied before it still sleeps")
    func lf() {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let source = LoopSource(label: "s") {}
        loop.add(source, mode: .default)
        loop.add(LoopObserver(activities: .beforeSources, repeats: false, order: 1) { _, _ in
            loop.remove(source, mode: .default)
        }, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0.2) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "X"])
        #expect(clock.now == at(ms: 200))
    }

    @Test("L-g no spurious wake cycle after a stale wakeUp or a removed timer (real clock)")
    func lg() throws {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let trace = tracing(loop)
        loop.add(LoopSource {}, mode: .default)
        // A wake-up during a run that exits without sleeping…
        let waker = LoopObserver(activities: .beforeSources, repeats: false, order: 1) { _, _ in loop.wakeUp() }
        loop.add(waker, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        // …and a timer armed then removed, its deadline already past when it leaves…
        let timer = try LoopTimer(fireAt: loop.clock.now) { _ in trace.add("timer") }
        loop.add(timer, mode: .default)
        loop.remove(timer, mode: .default)
        trace.reset()
        // …must not make the next wait return early: exactly one BW/AW (the timeout).
        #expect(loop.run(mode: .default, timeout: 0.02) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "X"])
    }
}
