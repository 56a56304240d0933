import RunLoopKit
import Testing

@Suite("Autorelease pools driven by the loop")
struct LoopPoolObserverTests {
    /// Runs one turn in which a source0 autoreleases `count` objects, and reports how many were
    /// alive at BeforeWaiting just before the pool observer (order 2147483646) and at the next
    /// AfterWaiting.
    private func turn(scheme: StandardObservers.PoolScheme, count: Int) -> (duringSource: Int, atBeforeWaiting: Int, afterWaiting: Int) {
        let loop = Loop(clock: VirtualClock())
        let live = LiveCount()
        var duringSource = -1, atBeforeWaiting = -1, afterWaiting = -1
        let standard = StandardObservers(installedOn: loop, pipeline: CommitPipeline(), pools: scheme)
        let source = LoopSource(label: "autoreleasing", onOwnerThreadOf: loop) {
            for _ in 0..<count { AutoreleasePool.autorelease(Tracked(live)) }
            duringSource = live.value
        }
        let probe = LoopObserver(activities: [.beforeWaiting, .afterWaiting], order: ObserverOrder.autoreleasePoolPop - 1, onOwnerThreadOf: loop) {
            _, activity in
            if activity == .beforeWaiting, atBeforeWaiting < 0 { atBeforeWaiting = live.value }
            if activity == .afterWaiting, afterWaiting < 0 { afterWaiting = live.value }
        }
        loop.add(source, mode: .default)
        loop.add(probe, mode: .default)
        source.signal()
        loop.run(mode: .default, timeout: 0.01)
        standard.uninstall()
        loop.tearDown()
        #expect(live.value == 0, "every object is released once the run's pool is popped")
        return (duringSource, atBeforeWaiting, afterWaiting)
    }

    @Test("objects autoreleased in a source0 live until BeforeWaiting and die right after it")
    func observersDrainAtBeforeWaiting() {
        let seen = turn(scheme: .runLoopObservers, count: 1000)
        #expect(seen.duringSource == 1000)
        #expect(seen.atBeforeWaiting == 1000)
        #expect(seen.afterWaiting == 0)
    }

    @Test("per-callout pools release objects when the callout returns")
    func perCalloutPoolsDrainAtCalloutEnd() {
        let seen = turn(scheme: .perCallout, count: 1000)
        #expect(seen.duringSource == 1000)
        #expect(seen.atBeforeWaiting == 0)
        #expect(seen.afterWaiting == 0)
    }

    @Test("nested runs push their own pool and pop it at their Exit")
    func nestedRunPools() {
        let loop = Loop(clock: VirtualClock())
        let live = LiveCount()
        loop.addCommonMode(.tracking)
        let pools = LoopAutoreleasePools(installedOn: loop)
        var innerDepth = 0, afterInner = -1
        let inner = LoopSource(label: "inner", onOwnerThreadOf: loop) {
            AutoreleasePool.autorelease(Tracked(live))
            innerDepth = pools.depth
        }
        let outer = LoopSource(label: "outer", onOwnerThreadOf: loop) {
            AutoreleasePool.autorelease(Tracked(live))
            inner.signal()
            loop.run(mode: .tracking, timeout: 0, returnAfterSourceHandled: true)
            afterInner = live.value
        }
        loop.add(outer, mode: .default)
        loop.add(inner, mode: .tracking)
        outer.signal()
        loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true)
        #expect(innerDepth == 2)
        #expect(afterInner == 1, "the inner run's Exit released only its own object")
        #expect(live.value == 0)
        #expect(pools.depth == 0)
        pools.uninstall()
        loop.tearDown()
    }
}
