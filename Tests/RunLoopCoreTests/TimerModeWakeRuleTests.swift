import Testing
import PThreads
import CRunLoopShims
import RunLoopDiagnostics
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// Timer (T*), mode (M*) and stop/wake/registry (W*) rules of Docs/Rules.md.
@Suite("TimerRules")
struct TimerRules {
    @Test("T1 NaN is refused, a negative Double interval means one-shot (a negative Duration throws), past fire dates fire at once")
    func t1() throws {
        #expect(throws: LoopError.notANumber(what: "LoopTimer interval")) {
            _ = try LoopTimer(fireAt: .zero, interval: Double.nan) { _ in }
        }
        #expect(throws: LoopError.negativeDuration(.seconds(-3), what: "LoopTimer interval")) {
            _ = try LoopTimer(fireAt: .zero, interval: .seconds(-3)) { _ in }
        }
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        try clock.advance(by: .milliseconds(50))
        var fires = 0
        let timer = try LoopTimer(fireAt: .zero, interval: -3.0, loop.ownerThreadCallout { _ in fires += 1 })
        #expect(timer.interval == .zero)
        loop.add(timer, mode: .default)
        #expect(loop.run(mode: .default, timeout: 1) == .finished)
        #expect(fires == 1 && !timer.isValid)
        #expect(clock.now == at(ms: 50))
    }

    @Test("T2 several modes of one loop; equal dates keep insertion order; a second loop is ignored")
    func t2() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let (second, _) = virtualLoop()
        defer { second.tearDown() }
        let trace = Trace()
        let a = try LoopTimer(fireAt: at(ms: 10), label: "a") { _ in trace.add("a") }
        let b = try LoopTimer(fireAt: at(ms: 10), label: "b") { _ in trace.add("b") }
        loop.add(a, mode: .default)
        loop.add(b, mode: .default)
        loop.add(a, mode: "Other")
        let recorder = DiagnosticsRecorder(capturing: [.addRefused])
        #expect(second.add(a, mode: .default) == .refused(.belongsToAnotherLoop))
        #expect(recorder.diagnostics(withID: .addRefused, item: "a").contains { $0.message.contains("another loop") })
        #expect(!second.contains(a, mode: .default))
        #expect(loop.contains(a, mode: "Other"))
        loop.remove(a, mode: "Other")
        #expect(a.isValid)
        loop.run(mode: .default, timeout: 1)
        #expect(trace.all == ["a", "b"])
    }

    @Test("T3 the mode's deadline follows the earliest timer (nextTimerFireDate, virtual jump)")
    func t3() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        let late = try LoopTimer(fireAt: at(ms: 30)) { _ in }
        let early = try LoopTimer(fireAt: at(ms: 20)) { _ in }
        loop.add(late, mode: .default)
        #expect(loop.nextTimerFireDate(in: .default) == at(ms: 30))
        loop.add(early, mode: .default)
        #expect(loop.nextTimerFireDate(in: .default) == at(ms: 20))
        loop.run(mode: .default, timeout: 1, returnAfterSourceHandled: false)
        #expect(clock.now == at(ms: 30))
        #expect(!early.isValid && !late.isValid)
    }

    @Test("T4 overdue timers all fire in one pass, by date")
    func t4() throws {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        for (name, time) in [("c", 3), ("a", 1), ("b", 2)] {
            loop.add(try LoopTimer(fireAt: at(ms: UInt64(time)), label: name) { _ in trace.add(name) }, mode: .default)
        }
        try clock.advance(by: .milliseconds(10))
        loop.run(mode: .default, timeout: 1)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "a", "b", "c", "X"])
    }

    @Test("T5 nextFireDate inside the callout is the firing date; catch-up stays on the grid")
    func t5() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        var seen: [LoopInstant] = []
        let timer = try LoopTimer(fireAt: at(ms: 10), interval: .milliseconds(10), loop.ownerThreadCallout { t in
            seen.append(t.nextFireDate)
            if seen.count == 1 { clock.advance(ms: 35) }  // 45 ms: ticks 20, 30, 40 are missed
            if seen.count == 2 { t.invalidate() }
        })
        loop.add(timer, mode: .default)
        loop.run(mode: .default, timeout: 1)
        #expect(seen == [at(ms: 10), at(ms: 50)])
    }

    @Test("T3, T5 a firing timer does not wake a nested run of its own mode; the next timer wakes it on time")
    func firingTimerAndNestedRun() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        var nestedResults: [Loop.RunResult] = []
        var nestedEnds: [LoopInstant] = []
        var laterFires: [LoopInstant] = []
        var waits = 0
        // What this test looks for would otherwise hang: a nested run that keeps waking for the
        // firing timer never reaches its timeout on the virtual clock. Stop it instead.
        let waitGuard = LoopObserver(activities: .beforeWaiting, label: "wait guard", loop.ownerThreadCallout { _, _ in
            waits += 1
            if waits > 20 { loop.stop() }
        })
        loop.add(waitGuard, mode: .default)
        let firing = try LoopTimer(fireAt: at(ms: 10), interval: .milliseconds(100), label: "firing", loop.ownerThreadCallout { _ in
            guard nestedResults.isEmpty else { return }
            nestedResults.append(loop.run(mode: .default, timeout: 0.05))
            nestedEnds.append(clock.now)
        })
        let later = try LoopTimer(fireAt: at(ms: 25), label: "later", loop.ownerThreadCallout { _ in laterFires.append(clock.now) })
        loop.add(firing, mode: .default)
        loop.add(later, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0.08) == .timedOut)
        #expect(laterFires == [at(ms: 25)], "the nested run fires the later timer at its date")
        #expect(nestedResults == [.timedOut], "the nested run waits out its timeout, never woken by the firing timer")
        #expect(nestedEnds == [at(ms: 60)])
        #expect(firing.nextFireDate == at(ms: 110), "after the callout the timer moves on its grid past the nested run")
        // The outer run waits to 10 ms and to 80 ms, the nested one to 25 ms and to 60 ms; a
        // fifth wait is one that the firing timer ended at once.
        #expect(waits == 4, "\(waits) waits: a run woke for a timer that was firing")
    }

    @Test("T6 setNextFireDate outside a callout moves the timer; a past date means now")
    func t6() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        var firedAt: [LoopInstant] = []
        let timer = try LoopTimer(fireAt: at(ms: 500), loop.ownerThreadCallout { _ in firedAt.append(clock.now) })
        loop.add(timer, mode: .default)
        timer.setNextFireDate(at(ms: 40))
        #expect(loop.nextTimerFireDate(in: .default) == at(ms: 40))
        loop.run(mode: .default, timeout: 1)
        #expect(firedAt == [at(ms: 40)])
    }

    @Test("T6 a timer counts the modes that hold it: removed from one of two, setNextFireDate still moves it in the other; out of both, it moves nowhere")
    func t6ModesCounted() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let timer = try LoopTimer(fireAt: at(ms: 500)) { _ in }
        loop.add(timer, mode: .default)
        loop.add(timer, mode: "Other")
        loop.remove(timer, mode: .default)
        timer.setNextFireDate(at(ms: 40))
        #expect(loop.nextTimerFireDate(in: "Other") == at(ms: 40))
        #expect(loop.nextTimerFireDate(in: .default) == nil)
        loop.remove(timer, mode: "Other")
        timer.setNextFireDate(at(ms: 20))
        #expect(loop.nextTimerFireDate(in: "Other") == nil)
        // Added back, it is where its date now says.
        loop.add(timer, mode: "Other")
        #expect(loop.nextTimerFireDate(in: "Other") == at(ms: 20))
        timer.invalidate()
        #expect(!loop.contains(timer, mode: "Other"))
    }

    @Test("T6 on the thread whose loop holds the timer (the re-arm without the weak load): moved in each mode holding it, a date set in the callout kept, out of every mode only the date set; from a thread with a loop of its own, moved in its own loop")
    func t6OnTheLoopsOwnThread() {
        let seen = Locked<[String]>([])
        runOnNewPThread {
            let loop = Loop.current
            let base = loop.clock.now
            func note(_ what: String, _ date: LoopInstant?) {
                seen.withLock { $0.append("\(what) \(date.map { String(base.duration(to: $0).components.seconds) } ?? "nil")") }
            }
            let timer = try! LoopTimer(fireAt: base.advanced(by: .seconds(500)), interval: .seconds(100)) { timer in
                timer.setNextFireDate(base.advanced(by: .seconds(7)))   // in the callout: kept (T5)
            }
            loop.add(timer, mode: .default)
            loop.add(timer, mode: "Other")
            timer.setNextFireDate(base.advanced(by: .seconds(40)))
            note("default", loop.nextTimerFireDate(in: .default))
            note("Other", loop.nextTimerFireDate(in: "Other"))
            timer.setNextFireDate(base)                                   // due now: fires in this pass
            loop.run(mode: .default, timeout: 0)
            note("after the callout", loop.nextTimerFireDate(in: .default))
            loop.remove(timer, mode: .default)
            loop.remove(timer, mode: "Other")
            timer.setNextFireDate(base.advanced(by: .seconds(20)))
            note("in no mode", loop.nextTimerFireDate(in: .default))
            note("its date", timer.nextFireDate)
            loop.add(timer, mode: "Other")
            runOnNewPThread {
                _ = Loop.current   // a loop of this thread's own, not the timer's
                timer.setNextFireDate(base.advanced(by: .seconds(30)))
            }
            note("from another loop's thread", loop.nextTimerFireDate(in: "Other"))
            timer.invalidate()
        }
        #expect(seen.withLock { $0 } == ["default 40", "Other 40", "after the callout 7", "in no mode nil",
                                         "its date 20", "from another loop's thread 30"])
    }

    @Test("T7 invalidate inside the callout: not rescheduled, removed from all modes")
    func t7() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        var fires = 0
        let timer = try LoopTimer(fireAt: at(ms: 1), interval: .milliseconds(1), loop.ownerThreadCallout { t in
            fires += 1
            t.invalidate()
        })
        loop.add(timer, mode: .common)
        #expect(loop.run(mode: .default, timeout: 1) == .finished)
        #expect(fires == 1)
        #expect(!loop.contains(timer, mode: .common))
    }

    @Test("T8 tolerance coalesces timers within min(tolerance, interval/2)")
    func t8() throws {
        do {  // t1 may wait 5 ms, so t1 and t2 fire together at 14 ms
            let (loop, clock, trace) = tracedVirtualLoop()
            defer { loop.tearDown() }
            loop.add(try LoopTimer(fireAt: at(ms: 10), tolerance: .milliseconds(5), label: "t1") { _ in trace.add("t1@\(clock.now.ms)") }, mode: .default)
            loop.add(try LoopTimer(fireAt: at(ms: 14), label: "t2") { _ in trace.add("t2@\(clock.now.ms)") }, mode: .default)
            loop.run(mode: .default, timeout: 1)
            #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "t1@14", "t2@14", "X"])
        }
        do {  // repeating 10 ms timer asking for 1 s of tolerance gets 5 ms: t2 at 16 ms does not join
            let (loop, clock) = virtualLoop()
            defer { loop.tearDown() }
            let trace = Trace()
            let t1 = try LoopTimer(fireAt: at(ms: 10), interval: .milliseconds(10), tolerance: .seconds(1), label: "t1") { t in
                trace.add("t1@\(clock.now.ms)")
                t.invalidate()
            }
            #expect(t1.tolerance == .seconds(1))
            loop.add(t1, mode: .default)
            loop.add(try LoopTimer(fireAt: at(ms: 16), label: "t2") { _ in trace.add("t2@\(clock.now.ms)") }, mode: .default)
            loop.run(mode: .default, timeout: 1)
            #expect(trace.all == ["t1@10", "t2@16"])
        }
        do {  // a lone timer is not delayed by its tolerance
            let (loop, clock) = virtualLoop()
            defer { loop.tearDown() }
            var firedAt = LoopInstant.zero
            loop.add(try LoopTimer(fireAt: at(ms: 10), tolerance: .milliseconds(500), loop.ownerThreadCallout { _ in firedAt = clock.now }), mode: .default)
            loop.run(mode: .default, timeout: 1)
            #expect(firedAt == at(ms: 10))
        }
    }

    @Test("T9 nextTimerFireDate: the first timer's date, nil without timers or mode")
    func t9() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        #expect(loop.nextTimerFireDate(in: .default) == nil)
        #expect(loop.nextTimerFireDate(in: "Missing") == nil)
        #expect(!loop.allModes.contains("Missing"))
        loop.add(try LoopTimer(fireAt: at(ms: 7)) { _ in }, mode: .default)
        #expect(loop.nextTimerFireDate(in: .default) == at(ms: 7))
    }

    @Test("T10 a timer in another mode does not wake the running mode")
    func t10() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let timer = try LoopTimer(fireAt: at(ms: 10)) { _ in trace.add("timer") }
        loop.add(timer, mode: "B")
        loop.add(LoopSource {}, mode: "A")
        #expect(loop.run(mode: "A", timeout: 0.1) == .timedOut)
        #expect(clock.now == at(ms: 100) && trace.all == [])
        #expect(loop.run(mode: "B", timeout: 0.1) == .finished)
        #expect(trace.all == ["timer"])
    }
}

@Suite("ModeRules")
struct ModeRules {
    @Test("M1 modes are created by add/perform/stop(mode:), not by run/remove/contains/addCommonMode")
    func m1() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        #expect(loop.allModes == [.default])
        #expect(loop.currentMode == nil)
        loop.run(mode: "R", timeout: 0)
        loop.remove(LoopSource {}, mode: "Rm")
        _ = loop.contains(LoopSource {}, mode: "C")
        loop.addCommonMode("Common")
        #expect(loop.allModes == [.default])
        loop.add(LoopSource {}, mode: "S")
        loop.perform(inMode: "P") {}
        loop.stop(mode: "Stop")
        #expect(loop.allModes == [.default, "S", "P", "Stop"])
    }

    @Test("M2 the default mode exists and is the only initial common mode")
    func m2() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        #expect(loop.allModes == [.default])
        #expect(loop.commonModes == [.default])
    }

    @Test("M3 .common items join every common mode; direct adds to a common mode are not common items")
    func m3() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        loop.addCommonMode(.tracking)
        let shared = LoopSource(label: "shared") {}
        loop.add(shared, mode: .common)
        #expect(loop.contains(shared, mode: .default) && loop.contains(shared, mode: .tracking))
        let direct = LoopSource(label: "direct") {}
        loop.add(direct, mode: .default)
        #expect(!loop.contains(direct, mode: .common))
        loop.remove(direct, mode: .common)  // not a common item: no effect
        #expect(loop.contains(direct, mode: .default))
        loop.remove(shared, mode: .common)
        #expect(!loop.contains(shared, mode: .default) && !loop.contains(shared, mode: .tracking))
    }

    @Test("M3 re-adding a common item to .common re-adds it to every common mode (source, seed 1675)")
    func m3ReAddSource() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let source = LoopSource(schedule: { _, m in trace.add("schedule \(m)") }) { trace.add("s0") }
        loop.add(source, mode: .common)
        loop.remove(source, mode: .default)   // direct removal: still a common item
        #expect(loop.contains(source, mode: .common) && !loop.contains(source, mode: .default))
        trace.reset()
        loop.add(source, mode: .common)       // CF applies the add to every common mode again
        #expect(loop.contains(source, mode: .default))
        source.signal()
        #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["schedule kCFRunLoopDefaultMode", "E", "BT", "BS", "s0", "X"])
        // Once back everywhere, a further add is a no-op (no second schedule).
        trace.reset()
        loop.add(source, mode: .common)
        #expect(trace.all == [])
    }

    @Test("M3 re-adding a common observer or timer to .common restores it in the mode it left")
    func m3ReAddObserverAndTimer() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        loop.addCommonMode(.tracking)
        let observer = LoopObserver(activities: .entry) { _, _ in }
        let timer = try LoopTimer(fireAt: LoopInstant(nanoseconds: 1)) { _ in }
        loop.add(observer, mode: .common)
        loop.add(timer, mode: .common)
        loop.remove(observer, mode: .tracking)
        loop.remove(timer, mode: .default)
        #expect(!loop.contains(observer, mode: .tracking) && !loop.contains(timer, mode: .default))
        loop.add(observer, mode: .common)
        loop.add(timer, mode: .common)
        #expect(loop.contains(observer, mode: .tracking) && loop.contains(observer, mode: .default))
        #expect(loop.contains(timer, mode: .default) && loop.contains(timer, mode: .tracking))
        #expect(loop.observers(in: .tracking).count == 1 && loop.observers(in: .default).count == 1)
        // Removing it from .common now removes it from both modes again.
        loop.remove(timer, mode: .common)
        #expect(!loop.contains(timer, mode: .default) && !loop.contains(timer, mode: .tracking))
    }

    @Test("M3 re-adding a common port or fd source to .common restores it in the mode it left")
    func m3ReAddPorts() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let port = try LoopPortSource { _ in }
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let file = LoopFileSource(fd: fds[0], events: .readable) { _ in }
        loop.add(port, mode: .common)
        loop.add(file, mode: .common)
        loop.remove(port, mode: .default)
        loop.remove(file, mode: .default)
        #expect(!loop.contains(port, mode: .default) && !loop.contains(file, mode: .default))
        loop.add(port, mode: .common)
        loop.add(file, mode: .common)
        #expect(loop.contains(port, mode: .default) && loop.contains(file, mode: .default))
    }

    @Test("M4 addCommonMode copies the common items into the new mode, scheduling sources")
    func m4() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let source = LoopSource(schedule: { _, m in trace.add("schedule \(m)") }) {}
        let observer = LoopObserver(activities: .entry) { _, _ in }
        let timer = try LoopTimer(fireAt: LoopInstant(nanoseconds: 1)) { _ in }
        loop.add(source, mode: .common)
        loop.add(observer, mode: .common)
        loop.add(timer, mode: .common)
        loop.addCommonMode(.tracking)
        loop.addCommonMode(.tracking)
        #expect(trace.all == ["schedule kCFRunLoopDefaultMode", "schedule UITrackingRunLoopMode"])
        #expect(loop.contains(observer, mode: .tracking) && loop.contains(timer, mode: .tracking))
        #expect(loop.commonModes == [.default, .tracking])
    }

    @Test("M5 .common cannot be run, but blocks may target it")
    func m5() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        loop.perform(inMode: .common) { trace.add("common block") }
        let recorder = DiagnosticsRecorder(capturing: [.runCommonModes])
        #expect(loop.run(mode: .common, timeout: 0) == .finished)
        #expect(!recorder.diagnostics(withID: .runCommonModes).isEmpty)
        #expect(trace.all == [])
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        #expect(trace.all == ["common block"])
    }
}

@Suite("WakeRules")
struct WakeRules {
    @Test("W3 L-g: a wake-up decided for an earlier run whose eventfd write lands late does not wake a later run")
    func lateWakeUpWriteIsStale() throws {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        // An idle port makes the wait an epoll wait on the wake eventfd.
        loop.add(try LoopPortSource(label: "idle") { _ in }, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0.01) == .timedOut)
        // What wakeUp() leaves when its write is delayed past the end of the run it decided
        // for: the record (consumed by the next pass top as stale), then the write itself.
        loop.recordWakeUpForLastRun()
        loop.forceWakeUpWrite()
        trace.reset()
        let passes = loop.passCount
        let start = clock.now
        #expect(loop.run(mode: .default, timeout: 0.5) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "X"])
        #expect(loop.passCount - passes == 1)
        #expect(start.duration(to: clock.now) == .milliseconds(500))
    }

    @Test("L-g: a wake-up taken in one mode leaves no wake in another (the edge-triggered event left in its set is stale)")
    func wakeTakenInOneModeIsStaleInAnother() throws {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let other = Loop.Mode("other-mode")
        // Idle ports make both waits epoll waits on sets that hold the wake-up eventfd.
        loop.add(try LoopPortSource(label: "idle-default") { _ in }, mode: .default)
        loop.add(try LoopPortSource(label: "idle-other") { _ in }, mode: other)
        recordActivities(loop, trace, mode: other)
        // Both sets exist now; a wake-up written from another thread during the default mode's
        // run reaches both.
        #expect(loop.run(mode: other, timeout: 0) == .timedOut)
        loop.add(LoopObserver(activities: .beforeWaiting, repeats: false, label: "cross-thread wake") { _, _ in
            let waker = BackgroundThread { loop.wakeUp() }
            waker.join()
        }, mode: .default)
        let woke = Trace()
        loop.add(LoopObserver(activities: .afterWaiting, label: "woke") { _, _ in
            woke.add("\(clock.now.nanoseconds / 1_000_000) ms")
        }, mode: .default)
        #expect(loop.run(mode: .default, timeout: 10) == .timedOut)
        #expect(woke.all.first == "0 ms", "the written wake-up did not end the default mode's first wait: \(woke.all)")
        trace.reset()
        let passes = loop.passCount
        let otherStart = clock.now
        #expect(loop.run(mode: other, timeout: 0.5) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "X"])
        #expect(loop.passCount - passes == 1)
        #expect(otherStart.duration(to: clock.now) == .milliseconds(500), "the other mode's wait ended early on the old event")
    }

    @Test("W1 stop() is ignored when not running and stops only the innermost run")
    func w1() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        loop.stop()
        loop.add(LoopSource {}, mode: .default)
        let trace = Trace()
        let nest = LoopSource(label: "nest") {
            loop.perform { loop.stop() }
            trace.add("inner \(loop.run(mode: .default, timeout: 1))")
        }
        loop.add(nest, mode: .default)
        nest.signal()
        #expect(loop.run(mode: .default, timeout: 0.05) == .timedOut)
        #expect(trace.all == ["inner stopped"])
    }

    @Test("W2 stop(mode:) is sticky and consumed once")
    func w2() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        loop.add(LoopSource {}, mode: "A")
        loop.stop(mode: "A")
        #expect(loop.run(mode: "A", timeout: 0) == .stopped)
        #expect(loop.run(mode: "A", timeout: 0) == .timedOut)
    }

    @Test("W3 wakeUp is ignored when the loop is not running")
    func w3() {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        loop.add(LoopSource {}, mode: .default)
        loop.wakeUp()
        #expect(loop.run(mode: .default, timeout: 0.03) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "X"])
        #expect(clock.now == at(ms: 30))
    }

    @Test("W3 a wakeUp from an Entry observer is effective: the first wait returns at once")
    func w3EntryWakeUp() {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        loop.add(LoopSource {}, mode: .default)
        loop.add(LoopObserver(activities: .entry, order: 1) { _, _ in loop.wakeUp() }, mode: .default)
        loop.add(LoopObserver(activities: .afterWaiting, order: 1) { _, _ in trace.add("@\(clock.now.ms)") },
                 mode: .default)
        #expect(loop.run(mode: .default, timeout: 0.05) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "@0", "BT", "BS", "BW", "AW", "@50", "X"])
    }

    @Test("W3 L-g a wake-up left by a run that stopped before waiting does not wake the next run")
    func w3StaleWakeUp() {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        loop.add(LoopSource {}, mode: .default)
        loop.add(LoopObserver(activities: .afterWaiting, order: 1) { _, _ in trace.add("@\(clock.now.ms)") },
                 mode: .default)
        // stop() in Entry writes the wake descriptor, and the run ends at L0 without waiting.
        loop.add(LoopObserver(activities: .entry, repeats: false, order: 1) { _, _ in loop.stop() }, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0.05) == .stopped)
        trace.reset()
        #expect(loop.run(mode: .default, timeout: 0.05) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "@50", "X"])
    }

    @Test("W4 isWaiting is true only inside the wait (W4), seen from another thread")
    func w4() {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let trace = Trace()
        loop.add(LoopSource {}, mode: .default)
        loop.add(LoopObserver(activities: [.beforeWaiting, .afterWaiting]) { _, a in
            trace.add("\(a.shortName) waiting=\(loop.isWaiting)")
        }, mode: .default)
        #expect(!loop.isWaiting)
        let other = BackgroundThread {
            #expect(loop.waitUntilWaiting(timeout: .seconds(10)), "the loop did not go to sleep within 10 s")
            loop.stop()
        }
        #expect(loop.run(mode: .default, timeout: 10) == .stopped)
        other.join()
        #expect(trace.all == ["BW waiting=false", "AW waiting=false"])
    }

    @Test("W5 one loop per thread; Loop.main is the same from every thread")
    func w5() {
        final class Box: @unchecked Sendable { var loops: [ObjectIdentifier] = [] }  // written before join
        let box = Box()
        let main = Loop.main
        runOnNewPThread {
            box.loops = [ObjectIdentifier(Loop.current), ObjectIdentifier(Loop.current), ObjectIdentifier(Loop.main)]
        }
        #expect(box.loops[0] == box.loops[1])
        #expect(box.loops[2] == ObjectIdentifier(main))
        #expect(box.loops[0] != ObjectIdentifier(main))
        #expect(Loop.current === Loop.current)
    }

    @Test("W6 thread exit: observers invalidated, timers detached but valid, sources cancelled")
    func w6() throws {
        final class Box: @unchecked Sendable { var items: (LoopObserver, LoopTimer, LoopSource)? }  // written before join
        let box = Box()
        let trace = Trace()
        runOnNewPThread {
            let loop = Loop.current
            let observer = LoopObserver(activities: .entry) { _, _ in }
            let timer = try! LoopTimer(fireAt: .distantFuture) { _ in }
            let source = LoopSource(cancel: { _, m in trace.add("cancel \(m)") }) {}
            loop.add(observer, mode: .default)
            loop.add(timer, mode: .default)
            loop.add(source, mode: .default)
            box.items = (observer, timer, source)
        }
        let (observer, timer, source) = box.items!
        #expect(!observer.isValid)
        #expect(timer.isValid)
        #expect(source.isValid)
        #expect(trace.all == ["cancel kCFRunLoopDefaultMode"])
        // Detached: another loop may take the timer now.
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        loop.add(timer, mode: .default)
        #expect(loop.contains(timer, mode: .default))
    }
}
