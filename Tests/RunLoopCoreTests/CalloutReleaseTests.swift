import Testing
import PThreads
@testable import RunLoopCore

/// A callout takes its closure out of the queue it ran from: what the closure captured is
/// released once it has run, not kept until the queue's storage is reused, and only once.
@Suite("Callouts release what they ran")
struct CalloutReleaseTests {
    /// Something a closure captures, watched through a weak reference.
    final class Capture: Sendable {}

    @Test("B4 a performed block's captures are released once it has run; a block of another mode keeps its own")
    func blockCapturesReleasedAfterItsCallout() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        weak var ran: Capture?
        weak var waiting: Capture?
        do {
            let first = Capture(), second = Capture()
            ran = first
            waiting = second
            loop.perform(label: "runs") { _ = first }
            loop.perform(inMode: "Other", label: "waits") { _ = second }
        }
        #expect(ran != nil && waiting != nil, "the queue holds both blocks")
        loop.run(mode: .default, timeout: 0)
        #expect(ran == nil, "released after its callout")
        #expect(waiting != nil, "put back for its own mode")
        loop.run(mode: "Other", timeout: 0)
        #expect(waiting == nil)
    }

    @Test("X4 submitted work's captures are released once it has run")
    func submittedWorkCapturesReleasedAfterItsCallout() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        weak var watched: Capture?
        do {
            let capture = Capture()
            watched = capture
            loop.submit(label: "work") { _ = capture; trace.add("work") }
        }
        #expect(watched != nil, "the async queue holds the work")
        #expect(loop.run(mode: .default, timeout: 0.05, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["work"])
        #expect(watched == nil, "released after its callout")
    }

    /// Watches an object without holding it, from any callout. `nonisolated(unsafe)`: each
    /// test reads it on its loop's one thread.
    final class Watch<Object: AnyObject>: Sendable {
        nonisolated(unsafe) weak var object: Object?
        init(_ object: Object) { self.object = object }
    }

    /// What `make` builds around a new capture, and the capture, watched: `make` hands the
    /// object to the loop, which then holds the only references to both.
    func heldOnlyByTheLoop<Object: AnyObject>(_ make: (Capture) throws -> Object) rethrows
        -> (object: Watch<Object>, capture: Watch<Capture>) {
        let capture = Capture()
        return (Watch(try make(capture)), Watch(capture))
    }

    @Test("T4 a due timer an earlier callout of its pass removes, held only by its mode: it does not fire, it lives until the pass ends, then it and its captures are freed")
    func timerRemovedByAnEarlierCalloutLivesUntilThePassEnds() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let (victim, captured) = try heldOnlyByTheLoop { capture in
            let victim = try LoopTimer(fireAt: loop.clock.now, label: "victim") { _ in _ = capture; trace.add("victim") }
            let watched = Watch(victim)
            // Due together, the timer added first fires first (T2).
            loop.add(try LoopTimer(fireAt: loop.clock.now, label: "remover") { _ in
                if let victim = watched.object { loop.remove(victim, mode: .default) }
                trace.add("removed; victim alive \(watched.object != nil)")
            }, mode: .default)
            loop.add(victim, mode: .default)
            return victim
        }
        #expect(victim.object != nil && captured.object != nil, "the mode holds the victim")
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["removed; victim alive true"])
        #expect(victim.object == nil && captured.object == nil, "freed once the pass ended")
    }

    @Test("T5 a one-shot timer held only by its mode fires once, then it and its captures are freed when its pass ends")
    func oneShotTimerFreedAfterItsPass() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let (once, captured) = try heldOnlyByTheLoop { capture in
            let once = try LoopTimer(fireAt: loop.clock.now, label: "once") { timer in
                _ = capture
                trace.add("fired, valid \(timer.isValid)")
            }
            loop.add(once, mode: .default)
            return once
        }
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["fired, valid true"])
        #expect(once.object == nil && captured.object == nil)
    }

    @Test("O4 a run hands its observer snapshot back to the mode: an observer removed between runs is freed with its captures at once, and the next run does not call it")
    func observerRemovedBetweenRunsIsFreedAtOnce() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        loop.add(LoopSource(label: "keeps the mode") {}, mode: .default)
        let (observer, captured) = heldOnlyByTheLoop { capture in
            let observer = LoopObserver(activities: .beforeTimers, label: "BT") { _, _ in _ = capture; trace.add("BT") }
            loop.add(observer, mode: .default)
            return observer
        }
        loop.run(mode: .default, timeout: 0)
        #expect(observer.object.map { loop.remove($0, mode: .default) } == true)
        #expect(observer.object == nil && captured.object == nil, "no run holds a snapshot between runs")
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["BT"])
    }

    @Test("O5 a run nested in an observer's callout, in the same mode, removes an observer the outer run still holds: the outer run calls it once more, then it is freed with its captures before the outer run ends")
    func observerRemovedInANestedRunOfTheSameMode() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        loop.add(LoopSource(label: "keeps the mode") {}, mode: .default)
        let nested = Locked(false)
        loop.add(LoopObserver(activities: .beforeTimers, order: 0, label: "outer") { _, _ in
            trace.add("outer")
            guard !nested.withLock({ $0 }) else { return }
            nested.withLock { $0 = true }
            loop.run(mode: .default, timeout: 0)
        }, mode: .default)
        let (_, captured) = heldOnlyByTheLoop { capture in
            let removed = LoopObserver(activities: .beforeTimers, order: 1, label: "removed") { observer, _ in
                _ = capture
                trace.add("removed")
                _ = loop.remove(observer, mode: .default)
            }
            loop.add(removed, mode: .default)
            return removed
        }
        loop.add(LoopObserver(activities: .beforeSources, label: "BS") { _, _ in
            trace.add("BS, removed freed \(captured.object == nil)")
        }, mode: .default)
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["outer", "removed", "BS, removed freed false", "removed", "BS, removed freed true"])
        #expect(captured.object == nil)
    }
}
