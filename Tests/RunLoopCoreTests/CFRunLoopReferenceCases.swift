import Testing
import PThreads
@testable import RunLoopCore

/// The 20 ordering reference cases of CFRunLoop, on the virtual clock. Observers record every activity at
/// order 0; callouts record their labels. Case 20 follows CF-1153 (S4 fixed). Cases marked MAIN
/// use a detached loop's async queue, which has the main queue's semantics (the real
/// DispatchQueue.main path is covered by `MainQueueTests`).
@Suite("CFRunLoopReferenceCases")
struct CFRunLoopReferenceCases {
    @Test("case01: observer-only mode → .finished, no callouts (R3, R4)")
    func case01() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        #expect(loop.run(mode: .default, timeout: 0.05) == .finished)
        #expect(trace.all == [])
    }

    @Test("case02: signalled source0 with returnAfterSourceHandled")
    func case02() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let source = recordingSource("perform", trace)
        loop.add(source, mode: .default)
        source.signal()
        #expect(loop.run(mode: .default, timeout: 1, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["E", "BT", "BS", "perform", "X"])
    }

    @Test("case03: no BW/AW in the pass that handled a source0 (L-a)")
    func case03() {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let source = recordingSource("perform", trace)
        loop.add(source, mode: .default)
        source.signal()
        #expect(loop.run(mode: .default, timeout: 0.05) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "perform", "BT", "BS", "BW", "AW", "X"])
        #expect(clock.now == at(ms: 50))
    }

    @Test("case04: timeout 0 polls once: no BW/AW")
    func case04() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        loop.add(recordingSource("idle", trace), mode: .default)
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "X"])
    }

    @Test("case05: a one-shot timer fires after the wait; the mode is then empty")
    func case05() throws {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        loop.add(try LoopTimer(after: 0.02, clock: clock, label: "timer") { _ in trace.add("timer") }, mode: .default)
        #expect(loop.run(mode: .default, timeout: 1) == .finished)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "timer", "X"])
        #expect(clock.now == at(ms: 20))
    }

    @Test("case06: timers do not count as handled (L-d)")
    func case06() throws {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        loop.add(recordingSource("idle", trace), mode: .default)
        loop.add(try LoopTimer(after: 0.02, clock: clock, label: "timer") { _ in trace.add("timer") }, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0.2, returnAfterSourceHandled: true) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "timer", "BT", "BS", "BW", "AW", "X"])
        #expect(clock.now == at(ms: 200))
    }

    @Test("case07: a block-only mode sleeps to the timeout (L-f)")
    func case07() {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        loop.perform(inMode: .default) { trace.add("block") }
        #expect(loop.run(mode: .default, timeout: 0.1) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "block", "BW", "AW", "X"])
        #expect(clock.now == at(ms: 100))
    }

    @Test("case08: blocks queued by a perform and by a block; blocks before sources0 (B3)")
    func case08() {
        do {
            let (loop, _, trace) = tracedVirtualLoop()
            defer { loop.tearDown() }
            let source = recordingSource("perform", trace) {
                loop.perform(label: "blockA") {
                    trace.add("blockA")
                    loop.perform(label: "blockB") { trace.add("blockB") }
                }
            }
            loop.add(source, mode: .default)
            source.signal()
            #expect(loop.run(mode: .default, timeout: 0.03) == .timedOut)
            #expect(trace.all == ["E", "BT", "BS", "perform", "blockA", "blockB", "BT", "BS", "BW", "AW", "X"])
        }
        do {
            let (loop, _, trace) = tracedVirtualLoop()
            defer { loop.tearDown() }
            let source = recordingSource("perform", trace)
            loop.add(source, mode: .default)
            loop.perform { trace.add("block") }
            source.signal()
            #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .handledSource)
            #expect(trace.all == ["E", "BT", "BS", "block", "perform", "X"])
        }
    }

    @Test("case09: source0 order, ties by signal order (S2)")
    func case09() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let c = recordingSource("c2", trace, order: 2)
        let b = recordingSource("b1", trace, order: 1)
        let a = recordingSource("a1", trace, order: 1)
        let n = recordingSource("neg", trace, order: -5)
        for s in [a, b, c, n] { loop.add(s, mode: .default) }
        for s in [c, b, a, n] { s.signal() }
        #expect(loop.run(mode: .default, timeout: 0.01, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["neg"])
        #expect(loop.run(mode: .default, timeout: 0.01, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["neg", "b1"])
        #expect(loop.run(mode: .default, timeout: 0.01, returnAfterSourceHandled: false) == .timedOut)
        #expect(trace.all == ["neg", "b1", "a1", "c2"])
    }

    @Test("case10: stop variants (W1, W2, L0)")
    func case10() {
        // (a) a perform stops the run
        do {
            let (loop, _, trace) = tracedVirtualLoop()
            defer { loop.tearDown() }
            let source = recordingSource("perform", trace) { loop.stop() }
            loop.add(source, mode: .default)
            source.signal()
            #expect(loop.run(mode: .default, timeout: 1) == .stopped)
            #expect(trace.all == ["E", "BT", "BS", "perform", "X"])
        }
        // (b) stop while idle is ignored
        do {
            let (loop, _, trace) = tracedVirtualLoop()
            defer { loop.tearDown() }
            let source = recordingSource("perform", trace)
            loop.add(source, mode: .default)
            loop.stop()
            source.signal()
            #expect(loop.run(mode: .default, timeout: 1, returnAfterSourceHandled: true) == .handledSource)
            #expect(trace.all == ["E", "BT", "BS", "perform", "X"])
        }
        // (c) stop inside the Entry observer
        do {
            let (loop, _, trace) = tracedVirtualLoop()
            defer { loop.tearDown() }
            loop.add(LoopObserver(activities: .entry, order: 1) { _, _ in loop.stop() }, mode: .default)
            loop.add(recordingSource("idle", trace), mode: .default)
            #expect(loop.run(mode: .default, timeout: 1) == .stopped)
            #expect(trace.all == ["E", "X"])
        }
        // (d) stop(mode:) while idle is sticky, then consumed
        do {
            let (loop, _, trace) = tracedVirtualLoop()
            defer { loop.tearDown() }
            loop.add(recordingSource("idle", trace), mode: .default)
            loop.stop(mode: .default)
            #expect(loop.run(mode: .default, timeout: 1) == .stopped)
            #expect(trace.all == ["E", "X"])
            trace.reset()
            #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
            #expect(trace.all == ["E", "BT", "BS", "X"])
        }
    }

    @Test("case11: nested run in another mode; outer mode restored (R5)")
    func case11() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let other: Loop.Mode = "Other"
        recordActivities(loop, trace)
        recordActivities(loop, trace, mode: other)
        let modeInTimer = Trace()
        loop.add(try LoopTimer(after: 0.01, clock: clock, label: "timer") { _ in
            trace.add("timer")
            modeInTimer.add(loop.currentMode?.name ?? "nil")
            loop.stop()
        }, mode: other)
        let inner = Trace()
        let source = recordingSource("perform", trace) {
            inner.add("\(loop.run(mode: other, timeout: 1))")
            inner.add(loop.currentMode?.name ?? "nil")
        }
        loop.add(source, mode: .default)
        source.signal()
        #expect(loop.run(mode: .default, timeout: 0.5) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "perform",
                              "E", "BT", "BS", "BW", "AW", "timer", "X",
                              "BT", "BS", "BW", "AW", "X"])
        #expect(inner.all == ["stopped", "kCFRunLoopDefaultMode"])
        #expect(modeInTimer.all == ["Other"])
        #expect(loop.currentMode == nil)
    }

    @Test("case12: observer order, snapshot, one-shot observers (O1, O4, O5)")
    func case12() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        loop.add(recordingSource("idle", trace), mode: .default)
        let o5 = LoopObserver(activities: .entry, order: 5) { _, _ in trace.add("5") }
        let o1a = LoopObserver(activities: .entry, order: 1) { _, _ in trace.add("1first") }
        let o1b = LoopObserver(activities: .entry, order: 1) { _, _ in trace.add("1second") }
        let oNeg = LoopObserver(activities: .entry, order: -1) { _, _ in trace.add("-1") }
        for o in [o5, o1a, o1b, oNeg] { loop.add(o, mode: .default) }
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["-1", "1first", "1second", "5"])
        for o in [o5, o1a, o1b, oNeg] { loop.remove(o, mode: .default) }

        trace.reset()
        let o10 = LoopObserver(activities: .entry, order: 10) { _, _ in trace.add("O10") }
        let o11 = LoopObserver(activities: .entry, order: 11) { _, _ in trace.add("O11") }
        let o100 = LoopObserver(activities: .entry, order: 100) { _, _ in trace.add("O100") }
        let o1 = LoopObserver(activities: .entry, order: 1) { _, _ in
            trace.add("O1")
            loop.remove(o10, mode: .default)
            o11.invalidate()
            loop.add(o100, mode: .default)
        }
        for o in [o1, o10, o11] { loop.add(o, mode: .default) }
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["O1", "O10"])
        trace.reset()
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["O1", "O100"])

        trace.reset()
        let once = LoopObserver(activities: .beforeSources, repeats: false) { _, _ in trace.add("once") }
        loop.add(once, mode: .default)
        loop.run(mode: .default, timeout: 0)
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all.filter { $0 == "once" } == ["once"])
        #expect(!once.isValid)
        #expect(!loop.contains(once, mode: .default))
    }

    @Test("case13: a late repeating timer skips missed ticks on its grid (T5)")
    func case13() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        var fires: [UInt64] = []
        var datesInCallout: [UInt64] = []
        let timer = try LoopTimer(after: 0.02, clock: clock, interval: 0.02, label: "tick", loop.ownerThreadCallout { timer in
            fires.append(clock.now.ms)
            datesInCallout.append(timer.nextFireDate.ms)
            if fires.count == 1 { clock.advance(seconds: 0.075) }
        })
        loop.add(timer, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0.13) == .timedOut)
        #expect(fires == [20, 100, 120])
        #expect(datesInCallout == [20, 100, 120])
        #expect(timer.nextFireDate == at(ms: 140))
    }

    @Test("case14: all overdue timers fire in one pass; invalidated ones are skipped (T4)")
    func case14() throws {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let t20 = try LoopTimer(fireAt: at(ms: 20), label: "t20") { _ in trace.add("t20") }
        let t10 = try LoopTimer(fireAt: at(ms: 10), label: "t10") { _ in trace.add("t10"); t20.invalidate() }
        let t30 = try LoopTimer(fireAt: at(ms: 30), label: "t30") { _ in trace.add("t30") }
        for t in [t30, t20, t10] { loop.add(t, mode: .default) }
        try clock.advance(by: .milliseconds(40))
        #expect(loop.run(mode: .default, timeout: 1) == .finished)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "t10", "t30", "X"])
    }

    @Test("case15: setNextFireDate in the callout; invalidation leaves every mode (T5, T7)")
    func case15() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        let other: Loop.Mode = "Other"
        var fires: [LoopInstant] = []
        let timer = try LoopTimer(after: .milliseconds(5), clock: clock, interval: .seconds(1), label: "t", loop.ownerThreadCallout { timer in
            fires.append(clock.now)
            if fires.count == 1 { timer.setNextFireDate(clock.now.advanced(by: .milliseconds(10))) } else { timer.invalidate() }
        })
        loop.add(timer, mode: .default)
        loop.add(timer, mode: other)
        loop.add(LoopSource(label: "idle") {}, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0.1) == .timedOut)
        #expect(fires == [at(ms: 5), at(ms: 15)])
        #expect(!loop.contains(timer, mode: .default))
        #expect(!loop.contains(timer, mode: other))
        #expect(loop.run(mode: other, timeout: 1) == .finished)

        // A past date set in the callout fires again as soon as possible (T5).
        let trace = tracing(loop)
        var count = 0
        let again = try LoopTimer(after: .milliseconds(20), clock: clock, interval: .seconds(10), label: "again") { timer in
            count += 1
            trace.add("fire\(count)")
            if count == 1 { timer.setNextFireDate(.zero) } else { timer.invalidate() }
        }
        loop.add(again, mode: .default)
        let start = clock.now
        #expect(loop.run(mode: .default, timeout: 0.1) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "fire1", "BT", "BS", "BW", "AW", "fire2",
                              "BT", "BS", "BW", "AW", "X"])
        #expect(clock.now == start.advanced(by: .milliseconds(100)))
    }

    @Test("case16: signal or perform without wakeUp does not wake a sleeping loop (S1, B1)")
    func case16() {
        // The loop thread's own BW observer stands in for "another thread during the sleep":
        // neither signal() nor perform() writes the wake descriptor.
        do {
            let (loop, clock, trace) = tracedVirtualLoop()
            defer { loop.tearDown() }
            loop.add(LoopObserver(activities: .beforeWaiting, repeats: false, order: 1) { _, _ in
                loop.perform(label: "xblock") { trace.add("xblock") }
            }, mode: .default)
            loop.add(LoopSource(label: "idle") {}, mode: .default)
            #expect(loop.run(mode: .default, timeout: 0.06) == .timedOut)
            #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "xblock", "X"])
            #expect(clock.now == at(ms: 60))
        }
        do {
            let (loop, _, trace) = tracedVirtualLoop()
            defer { loop.tearDown() }
            let source = recordingSource("perform", trace)
            loop.add(source, mode: .default)
            loop.add(LoopObserver(activities: .beforeWaiting, repeats: false, order: 1) { _, _ in source.signal() },
                     mode: .default)
            #expect(loop.run(mode: .default, timeout: 0.06) == .timedOut)
            #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "X"])
            #expect(source.isSignalled)
        }
    }

    @Test("case17: perform+wakeUp and signal+wakeUp wake the loop (W3)")
    func case17() {
        do {
            let (loop, _, trace) = tracedVirtualLoop()
            defer { loop.tearDown() }
            loop.add(LoopObserver(activities: .beforeWaiting, repeats: false, order: 1) { _, _ in
                loop.performAndWake(label: "xblock") { trace.add("xblock") }
            }, mode: .default)
            loop.add(LoopSource(label: "idle") {}, mode: .default)
            #expect(loop.run(mode: .default, timeout: 0.06, returnAfterSourceHandled: true) == .timedOut)
            #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "xblock", "BT", "BS", "BW", "AW", "X"])
        }
        do {
            let (loop, _, trace) = tracedVirtualLoop()
            defer { loop.tearDown() }
            let source = recordingSource("perform", trace)
            loop.add(source, mode: .default)
            loop.add(LoopObserver(activities: .beforeWaiting, repeats: false, order: 1) { _, _ in
                source.signal()
                loop.wakeUp()
            }, mode: .default)
            #expect(loop.run(mode: .default, timeout: 0.06, returnAfterSourceHandled: true) == .handledSource)
            #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "BT", "BS", "perform", "X"])
        }
    }

    @Test("case18: MAIN-style async queue: served after a wait; not in a non-common mode; nested run finishes")
    func case18() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        loop.submit(label: "q") { trace.add("q") }
        #expect(loop.run(mode: .default, timeout: 0.5, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "q", "X"])

        // Not served in a non-common mode: an observer-only mode is finished, no Entry.
        trace.reset()
        let other: Loop.Mode = "Other"
        recordActivities(loop, trace, mode: other)
        loop.submit(label: "q2") { trace.add("q2") }
        #expect(loop.run(mode: other, timeout: 0.5) == .finished)
        #expect(trace.all == [])
        #expect(loop.run(mode: .default, timeout: 0.5, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "q2", "X"])

        // A nested run inside async work finishes at once; work queued there is deferred (R4a, X4).
        trace.reset()
        let nested = Trace()
        loop.submit(label: "outer") {
            trace.add("outer")
            loop.submit(label: "inner") { trace.add("inner") }
            nested.add("\(loop.run(mode: .default, timeout: 0.5))")
        }
        #expect(loop.run(mode: .default, timeout: 0.5, returnAfterSourceHandled: true) == .handledSource)
        #expect(nested.all == ["finished"])
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "outer", "X"])
        trace.reset()
        #expect(loop.run(mode: .default, timeout: 0.5, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "inner", "X"])
    }

    @Test("case19: MAIN-style fast path: async work queued by a timer runs without BW/AW")
    func case19() throws {
        let (loop, clock, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        loop.add(try LoopTimer(after: 0.01, clock: clock, label: "timer") { _ in
            trace.add("timer")
            loop.submit(label: "q") { trace.add("q") }
        }, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0.5, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "timer", "BT", "BS", "q", "X"])
    }

    @Test("case20: handled flags are ORed (CF-1153), not SCF's last-one-wins (S4)")
    func case20() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let b = recordingSource("B", trace, order: 1)
        let a = recordingSource("A", trace, order: 0) {
            b.invalidate()
            loop.perform(label: "blockA") { trace.add("blockA") }
        }
        loop.add(a, mode: .default)
        loop.add(b, mode: .default)
        a.signal()
        b.signal()
        #expect(loop.run(mode: .default, timeout: 0.05) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "A", "blockA", "BT", "BS", "BW", "AW", "X"])
    }
}

/// The examples of Docs/RunLoop.md, so they stay true.
@Suite("DocExamples")
struct DocExamples {
    @Test("the first example of Docs/RunLoop.md prints what the page says")
    func firstExample() throws {
        let trace = Trace()
        let clock = VirtualClock()
        let loop = Loop(clock: clock)
        loop.add(LoopObserver(activities: .allActivities, label: "log") { _, activity in
            trace.add(activity.shortName)
        }, mode: .default)
        let source = LoopSource(label: "work") { trace.add("perform") }
        loop.add(source, mode: .default)
        loop.add(try LoopTimer(after: .milliseconds(20), clock: loop.clock, label: "tick") { _ in trace.add("tick") },
                 mode: .default)
        source.signal()
        #expect(loop.run(mode: .default, timeout: 1) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "perform", "BT", "BS", "BW", "AW", "tick", "BT", "BS", "BW", "AW", "X"])
        #expect(clock.now == at(ms: 1_000))
    }

    @Test("the cross-thread example: a port message from another thread stops run()")
    func crossThreadExample() {
        runOnNewPThread {
            let loop = Loop.current
            let port = try! LoopPortSource(label: "commands") { message in
                if case .value(let command as String) = message, command == "quit" { loop.stop() }
            }
            loop.add(port, mode: .default)
            let failures = Trace()
            let sender = BackgroundThread {
                do { try port.send(value: "quit") } catch { failures.add("\(error)") }
            }
            loop.run()
            sender.join()
            #expect(failures.all == [])
        }
    }
}
