import Testing
@testable import RunLoopCore

/// The per-mode, per-activity observer snapshot behind notifications (O1, O4, O5).
@Suite("ObserverSnapshot")
struct ObserverSnapshotTests {
    @Test("O1/O4 each activity calls only the observers that asked for it, in order, across mixed masks")
    func perActivity() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        loop.add(LoopSource {}, mode: .default)
        let masks: [(String, Loop.Activity, Int)] = [
            ("a", [.entry, .exit], 2),
            ("b", .allActivities, 1),
            ("c", .beforeSources, 0),
            ("d", [.beforeTimers, .exit], 2),
        ]
        for (label, activities, order) in masks {
            loop.add(LoopObserver(activities: activities, order: order, label: label) { observer, activity in
                trace.add("\(observer.label):\(activity.shortName)")
            }, mode: .default)
        }
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        #expect(trace.all == ["b:E", "a:E", "b:BT", "d:BT", "c:BS", "b:BS", "b:X", "a:X", "d:X"])
    }

    @Test("O4 a change made in one notification is seen by the next notification of the same run")
    func changeWithinRun() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        loop.add(LoopSource {}, mode: .default)
        let late = LoopObserver(activities: .beforeSources, label: "late") { _, _ in trace.add("late") }
        let gone = LoopObserver(activities: .beforeSources, label: "gone") { _, _ in trace.add("gone") }
        loop.add(gone, mode: .default)
        loop.add(LoopObserver(activities: .beforeTimers, repeats: false, label: "changer") { _, _ in
            trace.add("changer")
            loop.add(late, mode: .default)
            loop.remove(gone, mode: .default)
        }, mode: .default)
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["changer", "late"])
        trace.reset()
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["late"])
    }

    @Test("O5 an observer removed between runs is released at once; the next run calls the others")
    func removedBetweenRunsIsReleased() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        loop.add(LoopSource {}, mode: .default)
        loop.add(LoopObserver(activities: .entry, label: "stays") { _, _ in trace.add("stays") }, mode: .default)
        weak var weakRemoved: LoopObserver?
        do {
            let removed = LoopObserver(activities: .entry, label: "removed") { _, _ in trace.add("removed") }
            weakRemoved = removed
            loop.add(removed, mode: .default)
            loop.run(mode: .default, timeout: 0)
            loop.remove(removed, mode: .default)
        }
        // Neither the mode nor the last run keeps a snapshot holding it.
        #expect(weakRemoved == nil)
        loop.run(mode: .default, timeout: 0)
        #expect(trace.all == ["stays", "removed", "stays"])
    }

    @Test("a mode's snapshot is shared by its runs until its observers change")
    func sharedUntilChanged() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        loop.add(LoopSource {}, mode: .default)
        loop.add(LoopObserver(activities: .entry) { _, _ in }, mode: .default)
        loop.run(mode: .default, timeout: 0)
        let state = try #require(loop.lock.withLock { $0.loop.modes[.default] })
        let first = try #require(loop.lock.withLock { $0[state].observerSnapshot })
        loop.run(mode: .default, timeout: 0)
        #expect(loop.lock.withLock { $0[state].observerSnapshot } === first)
        loop.add(LoopObserver(activities: .exit) { _, _ in }, mode: .default)
        #expect(loop.lock.withLock { $0[state].observerSnapshot } == nil)
        loop.run(mode: .default, timeout: 0)
        let rebuilt = try #require(loop.lock.withLock { $0[state].observerSnapshot })
        #expect(rebuilt !== first && rebuilt.observers.count == 2)
    }

    @Test("O3 the live activity mask follows the observers (widened as one joins, narrowed as one leaves, also through .common); the sink's mask keeps every activity ever observed")
    func maskFollowsObservers() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        loop.add(LoopSource {}, mode: .default)
        let entry = LoopObserver(activities: .entry) { _, _ in }
        let waits = LoopObserver(activities: [.beforeWaiting, .afterWaiting]) { _, _ in }
        let exit = LoopObserver(activities: .exit) { _, _ in }
        loop.add(entry, mode: .default)
        loop.add(waits, mode: .default)
        loop.add(exit, mode: .common)
        let state = try #require(loop.lock.withLock { $0.loop.modes[.default] })
        let all = Loop.Activity([.entry, .beforeWaiting, .afterWaiting, .exit]).rawValue
        #expect(state.liveObserverMask.load(ordering: .relaxed) == all)
        loop.remove(waits, mode: .default)
        #expect(state.liveObserverMask.load(ordering: .relaxed) == Loop.Activity([.entry, .exit]).rawValue)
        loop.remove(exit, mode: .common)
        #expect(state.liveObserverMask.load(ordering: .relaxed) == Loop.Activity.entry.rawValue)
        loop.remove(entry, mode: .default)
        #expect(state.liveObserverMask.load(ordering: .relaxed) == 0)
        #expect(state.observerMask.load(ordering: .relaxed) == all)
        // With no observer left, a run calls nobody; an observer added later is called.
        let log = Trace()
        loop.add(LoopObserver(activities: .exit) { _, _ in log.add("X") }, mode: .default)
        loop.run(mode: .default, timeout: 0)
        #expect(log.all == ["X"])
    }
}
