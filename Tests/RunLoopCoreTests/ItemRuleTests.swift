import Testing
import CRunLoopShims
import RunLoopDiagnostics
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// Observer (O*), block (B*) and source (S*) rules of Docs/Rules.md.
@Suite("ObserverRules")
struct ObserverRules {
    @Test("O1 ascending order, ties FIFO; adding twice is a no-op")
    func o1() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let a = LoopObserver(activities: .entry, order: 3, label: "a") { _, _ in }
        let b = LoopObserver(activities: .entry, order: 1, label: "b") { _, _ in }
        let c = LoopObserver(activities: .entry, order: 3, label: "c") { _, _ in }
        for o in [a, b, c] { #expect(loop.add(o, mode: .default) == .added) }
        #expect(loop.add(a, mode: .default) == .alreadyPresent)
        #expect(loop.observers(in: .default).map(\.label) == ["b", "a", "c"])
    }

    @Test("O2 one loop, many modes; a second loop is ignored with a diagnostic, also after removal while the first lives")
    func o2() {
        let (second, _) = virtualLoop()
        defer { second.tearDown() }
        let trace = Trace()
        let recorder = DiagnosticsRecorder(capturing: [.addRefused])
        let observer = LoopObserver(activities: .entry, label: "o2-observer") { _, _ in trace.add("E") }
        weak var firstLoop: Loop?
        do {
            let (loop, _) = virtualLoop()
            firstLoop = loop
            loop.add(observer, mode: .default)
            loop.add(observer, mode: "Other")
            #expect(second.add(observer, mode: .default) == .refused(.belongsToAnotherLoop))
            #expect(loop.contains(observer, mode: .default) && loop.contains(observer, mode: "Other"))
            #expect(!second.contains(observer, mode: .default))
            #expect(recorder.diagnostics(withID: .addRefused, item: "o2-observer").count == 1)
            // Out of every mode, it stays bound: the first loop's thread may still be inside
            // its callout (a `sending` closure, never run on two threads at once).
            loop.remove(observer, mode: .default)
            loop.remove(observer, mode: "Other")
            #expect(second.add(observer, mode: .default) == .refused(.belongsToAnotherLoop))
            loop.tearDown()
        }
        // Once the first loop is freed, another loop may take it.
        #expect(firstLoop == nil, "the first loop is still alive")
        #expect(second.add(observer, mode: .default) == .added)
        #expect(second.contains(observer, mode: .default))
    }

    @Test("O3 the activity mask is never cleared: removed observers leave their activities notified")
    func o3() {
        final class Sink: LoopEventSink, @unchecked Sendable {  // loop-thread only
            var activities: [String] = []
            func loop(_ loop: Loop, emitted event: LoopEvent) {
                if case .activity(let a) = event.kind { activities.append(a.shortName) }
            }
        }
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let sink = Sink()
        loop.eventSink = sink
        loop.add(LoopSource {}, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        #expect(sink.activities == [])
        let observer = LoopObserver(activities: [.entry, .beforeSources]) { _, _ in }
        loop.add(observer, mode: .default)
        loop.remove(observer, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        #expect(sink.activities == ["E", "BS"])
    }

    @Test("O4 callouts use a snapshot: an observer added during a callout waits for the next notification")
    func o4() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        loop.add(LoopSource {}, mode: .default)
        let late = LoopObserver(activities: .beforeTimers, label: "late") { _, _ in trace.add("late") }
        loop.add(LoopObserver(activities: .beforeTimers, repeats: false) { _, _ in
            trace.add("first")
            loop.add(late, mode: .default)
        }, mode: .default)
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["first"])
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["first", "late"])
    }

    @Test("O5 a firing observer is not re-entered by a nested run in its own callout")
    func o5() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        loop.add(LoopSource {}, mode: .default)
        var depth = 0
        loop.add(LoopObserver(activities: .beforeSources, label: "nester") { _, _ in
            trace.add("nester")
            depth += 1
            if depth == 1 { loop.run(mode: .default, timeout: 0) }
        }, mode: .default)
        loop.add(LoopObserver(activities: .beforeSources, order: 1, label: "other") { _, _ in trace.add("other") },
                 mode: .default)
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["nester", "other", "other"])
    }

    @Test("O5 an observer removed by an earlier callout is still called, even when nothing else holds it")
    func o5RemovedStillCalled() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        loop.add(LoopSource {}, mode: .default)
        weak var weakVictim: LoopObserver?
        do {
            // Only the mode holds the victims; the snapshot must keep them alive (O4/O5).
            for label in ["victim1", "victim2"] {
                let victim = LoopObserver(activities: .beforeTimers, order: 1, label: label) { observer, _ in
                    trace.add(observer.label)
                }
                loop.add(victim, mode: .default)
                if label == "victim2" { weakVictim = victim }
            }
        }
        loop.add(LoopObserver(activities: .beforeTimers, order: 0, label: "remover") { _, _ in
            trace.add("remover")
            for observer in loop.observers(in: .default) where observer.label.hasPrefix("victim") {
                loop.remove(observer, mode: .default)
            }
        }, mode: .default)
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["remover", "victim1", "victim2"])
        #expect(weakVictim == nil)  // released once the notification's snapshot is dropped
        trace.reset()
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["remover"])
    }

    @Test("O6 invalidate removes the observer from every mode and the common items")
    func o6() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let observer = LoopObserver(activities: .entry) { _, _ in }
        loop.add(observer, mode: .common)
        loop.add(observer, mode: "Other")
        observer.invalidate()
        #expect(!observer.isValid)
        #expect(!loop.contains(observer, mode: .common))
        #expect(!loop.contains(observer, mode: .default))
        #expect(!loop.contains(observer, mode: "Other"))
        observer.invalidate()  // twice is harmless
    }
}

@Suite("BlockRules")
struct BlockRules {
    @Test("B1 perform creates its modes, does not wake, drops an empty mode list")
    func b1() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        loop.perform(inMode: "Created") { trace.add("x") }
        #expect(loop.allModes.contains("Created"))
        loop.perform(inModes: []) { trace.add("dropped") }
        #expect(loop.isFinished(mode: .default))
        #expect(loop.run(mode: "Created", timeout: 0) == .timedOut)
        #expect(trace.all == ["x"])
    }

    @Test("B2 FIFO per mode; other modes' blocks keep their order; common and set targets")
    func b2() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        loop.addCommonMode("C")
        loop.perform(inMode: "A", label: "a1") { trace.add("a1") }
        loop.perform(label: "d1") { trace.add("d1") }
        loop.perform(inMode: .common, label: "common") { trace.add("common") }
        loop.perform(inMode: "A", label: "a2") { trace.add("a2") }
        loop.perform(inModes: ["A", "C"], label: "set") { trace.add("set") }
        loop.perform(label: "d2") { trace.add("d2") }
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["d1", "common", "d2"])
        trace.reset()
        loop.run(mode: "A", timeout: 0)
        #expect(trace.all == ["a1", "a2", "set"])
        trace.reset()
        #expect(loop.run(mode: "C", timeout: 0) == .finished)  // nothing left for C
    }

    @Test("B2 a block that makes the current mode common lets a later .common block run in the same walk")
    func b2LiveCommonModes() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let m1: Loop.Mode = "M1"
        let source = recordingSource("s0", trace)
        loop.add(source, mode: m1)
        loop.perform(inMode: m1, label: "b0") { trace.add("b0"); loop.addCommonMode(m1) }
        loop.perform(inMode: .common, label: "b1") { trace.add("b1") }
        loop.perform(inModes: ["Other", .common], label: "b2") { trace.add("b2") }
        loop.perform(inMode: "Other", label: "kept") { trace.add("kept") }
        source.signal()
        #expect(loop.run(mode: m1, timeout: 0) == .timedOut)
        // CF: b0 b1 (same walk, before the sources) then s0; the block for "Other" stays queued.
        #expect(trace.all == ["b0", "b1", "b2", "s0"])
        trace.reset()
        #expect(loop.run(mode: "Other", timeout: 0) == .timedOut)
        #expect(trace.all == ["kept"])
    }

    @Test("B3 blocks run after BS, after handled sources0, and at the end of the pass")
    func b3() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let source = recordingSource("s", trace) { loop.perform(label: "fromSource") { trace.add("fromSource") } }
        loop.add(source, mode: .default)
        loop.add(LoopObserver(activities: .afterWaiting, repeats: false, order: 1) { _, _ in
            loop.perform(label: "fromAW") { trace.add("fromAW") }
        }, mode: .default)
        loop.perform(label: "early") { trace.add("early") }
        source.signal()
        loop.run(mode: .default, timeout: 0.01)
        #expect(trace.all == ["E", "BT", "BS", "early", "s", "fromSource", "BT", "BS", "BW", "AW", "fromAW", "X"])
    }

    @Test("B4 each block is its own callout, reported to the sink and the interceptor")
    func b4() {
        final class Spy: LoopEventSink, LoopCalloutInterceptor, @unchecked Sendable {  // loop thread only
            var log: [String] = []
            func loop(_ loop: Loop, emitted event: LoopEvent) {
                switch event.kind {
                case .calloutBegin(let k): log.append("begin \(k) \(event.label)")
                case .calloutEnd(let k): log.append("end \(k) \(event.label)")
                default: break
                }
            }
            func willCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) { log.append("will \(label)") }
            func didCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) { log.append("did \(label)") }
        }
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let spy = Spy()
        loop.eventSink = spy
        loop.calloutInterceptor = spy
        loop.perform(label: "b") { }
        loop.run(mode: .default, timeout: 0)
        // The interceptor runs inside the callout's span (its end-of-callout work is traced there).
        #expect(spy.log == ["begin block b", "will b", "did b", "end block b"])
    }
}

@Suite("SourceRules")
struct SourceRules {
    @Test("S1 signal: no wake-up, first signal wins the tie-break, ignored when invalid")
    func s1() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let a = recordingSource("a", trace)
        let b = recordingSource("b", trace)
        loop.add(a, mode: .default)
        loop.add(b, mode: .default)
        a.signal()
        b.signal()
        a.signal()  // does not move a behind b
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["a", "b"])
        a.invalidate()
        a.signal()
        #expect(!a.isSignalled)
    }

    @Test("S2 with returnAfterSourceHandled the others stay signalled")
    func s2() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let a = recordingSource("a", trace, order: 1)
        let b = recordingSource("b", trace, order: 2)
        loop.add(a, mode: .default)
        loop.add(b, mode: .default)
        b.signal()
        a.signal()
        #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["a"])
        #expect(b.isSignalled && !a.isSignalled)
    }

    @Test("S3 re-signalling in the perform runs again next pass, without BW/AW")
    func s3() {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        var count = 0
        var me: LoopSource?
        let source = LoopSource(label: "self", onOwnerThreadOf: loop) {
            count += 1
            trace.add("self\(count)")
            if count < 3 { me?.signal() }
        }
        me = source
        loop.add(source, mode: .default)
        source.signal()
        loop.run(mode: .default, timeout: 0.01)
        #expect(trace.all == ["E", "BT", "BS", "self1", "BT", "BS", "self2", "BT", "BS", "self3",
                              "BT", "BS", "BW", "AW", "X"])
        me = nil
    }

    @Test("S4 handled is the OR of all performs (CF-1153), even when the last one was skipped")
    func s4() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let b = LoopSource(order: 1) {}
        let a = LoopSource(order: 0) { b.invalidate() }
        loop.add(a, mode: .default)
        loop.add(b, mode: .default)
        a.signal()
        b.signal()
        // handled → poll: the pass does not sleep, so a 1 s timeout is not reached in pass 1.
        let trace = tracing(loop)
        #expect(loop.run(mode: .default, timeout: 1) == .timedOut)
        #expect(trace.all == ["E", "BT", "BS", "BT", "BS", "BW", "AW", "X"])
    }

    @Test("S5 schedule/cancel per concrete mode (common → each common mode); a source may be in two loops")
    func s5() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let (second, _) = virtualLoop()
        defer { second.tearDown() }
        let trace = Trace()
        loop.addCommonMode("C")
        let source = LoopSource(schedule: { l, m in trace.add("schedule \(l === loop ? 1 : 2) \(m)") },
                                cancel: { l, m in trace.add("cancel \(l === loop ? 1 : 2) \(m)") }) {}
        loop.add(source, mode: .common)
        loop.add(source, mode: .common)  // no-op
        second.add(source, mode: "X")
        #expect(Set(trace.all) == ["schedule 1 kCFRunLoopDefaultMode", "schedule 1 C", "schedule 2 X"])
        #expect(trace.all.count == 3)
        trace.reset()
        loop.remove(source, mode: .common)
        #expect(Set(trace.all) == ["cancel 1 kCFRunLoopDefaultMode", "cancel 1 C"])
        #expect(second.contains(source, mode: "X"))
    }

    @Test("S6 invalidate clears signalled and cancels in every mode of every loop")
    func s6() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let (second, _) = virtualLoop()
        defer { second.tearDown() }
        let trace = Trace()
        let source = LoopSource(cancel: { _, m in trace.add("cancel \(m)") }) { trace.add("perform") }
        loop.add(source, mode: .default)
        loop.add(source, mode: "A")
        second.add(source, mode: "B")
        source.signal()
        source.invalidate()
        #expect(!source.isSignalled && !source.isValid)
        #expect(Set(trace.all) == ["cancel kCFRunLoopDefaultMode", "cancel A", "cancel B"])
        #expect(!loop.contains(source, mode: .default) && !second.contains(source, mode: "B"))
        let recorder = DiagnosticsRecorder(capturing: [.addRefused])
        #expect(loop.add(source, mode: .default) == .refused(.invalidated))
        #expect(!loop.contains(source, mode: .default))
        #expect(recorder.diagnostics(withID: .addRefused, item: "source0").contains { $0.message.hasSuffix("the item was invalidated") })
    }

    @Test("S7 a port message wakes the loop; the handler runs after AW")
    func s7() throws {
        let (loop, _, trace) = tracedVirtualLoop()
        defer { loop.tearDown() }
        let port = try LoopPortSource(label: "port") { message in
            if case .value(let v) = message { trace.add("got \(v)") }
        }
        loop.add(port, mode: .default)
        try port.send(value: "hi")
        #expect(loop.run(mode: .default, timeout: 1, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "got hi", "X"])
    }

    @Test("S8 an invalidated port drops its messages, refuses new ones (closed) and is not handled")
    func s8() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let port = try LoopPortSource { _ in trace.add("m") }
        loop.add(port, mode: .default)
        loop.add(LoopSource {}, mode: .default)
        try port.send([1])
        port.invalidate()
        #expect(throws: LoopPortSource.SendError.closed) { try port.send([2]) }
        #expect(port.pendingCount == 0)
        #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .timedOut)
        #expect(trace.all == [])
    }
}
