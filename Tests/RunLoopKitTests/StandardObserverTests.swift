import RunLoopKit
import Testing

@Suite("Standard observers")
struct StandardObserverTests {
    @Test("one call installs the iOS main-loop set in the common modes, in CF order")
    func installsTheSet() {
        let loop = Loop(clock: VirtualClock())
        let standard = StandardObservers(installedOn: loop, pipeline: CommitPipeline())
        let observed = loop.observers(in: .default).map { "\($0.order) 0x\(String($0.activities.rawValue, radix: 16)) \($0.label)" }
        #expect(observed == [
            "-2147483648 0x1 transactionRunLevel",
            "-2147483647 0x1 _wrapRunLoopWithAutoreleasePoolHandler",
            "0 0x20 _UIGestureRecognizerUpdateObserver",
            "1999000 0xa0 _beforeCACommitHandler",
            "2000000 0xa0 CA::Transaction::observer_callback",
            "2001000 0xa0 _afterCACommitHandler",
            "2147483647 0xa0 _wrapRunLoopWithAutoreleasePoolHandler",
        ])
        loop.addCommonMode(.tracking)
        #expect(loop.observers(in: .tracking).count == 7, "common-mode items follow a new common mode")
        let dump = loop.observerDump(modes: [.default])
        #expect(dump.contains("activities = 0xa0, repeats = Yes, order = 2000000, callout = CA::Transaction::observer_callback"))
        standard.uninstall()
        #expect(loop.observers(in: .default).isEmpty)
        loop.tearDown()
    }

    @Test("at BeforeWaiting: event hook, before-commit, layout and display, after-commit, pool pop")
    func beforeWaitingOrder() {
        let loop = Loop(clock: VirtualClock())
        let log = CalloutLog()
        loop.eventSink = log
        let pipeline = CommitPipeline(clock: LoopTransactionClock(loop.clock))
        pipeline.asCurrent {
            let standard = StandardObservers(installedOn: loop, pipeline: pipeline)
            let layer = Layer(name: "table")
            layer.onLayout = { _ in log.note("layout") }
            layer.onDisplay = { _, _ in log.note("display") }
            let source = LoopSource(label: "event", onOwnerThreadOf: loop) {
                layer.setNeedsLayout(); layer.setNeedsLayout()
                layer.setNeedsDisplay(); layer.setNeedsDisplay()
            }
            loop.add(source, mode: .default)
            source.signal()
            loop.run(mode: .default, timeout: 0.01)
            standard.uninstall()
        }
        loop.tearDown()
        let bw = log.entries.firstIndex(of: "BW")!
        // No observer of the set watches AfterWaiting, so (as in CF) the next activity is Exit.
        let turn = Array(log.entries[bw...].prefix(9))
        #expect(turn == [
            "BW", "_UIGestureRecognizerUpdateObserver", "_beforeCACommitHandler",
            "CA::Transaction::observer_callback", "layout", "display",
            "_afterCACommitHandler", "_wrapRunLoopWithAutoreleasePoolHandler", "X",
        ])
        #expect(log.entries.filter { $0 == "layout" }.count == 1, "marks coalesce into one layout")
    }
}

@Suite("Callout interceptors")
struct CalloutInterceptorTests {
    /// Logs its calls as "name>" before and "<name" after each callout.
    final class Bracket: LoopCalloutInterceptor, @unchecked Sendable {
        // Called only on the loop's thread, which is the test's thread.
        let name: String
        let log: CalloutLog
        init(_ name: String, _ log: CalloutLog) { self.name = name; self.log = log }
        func willCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) { log.note("\(name)>") }
        func didCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) { log.note("<\(name)") }
    }

    @Test("added interceptors nest like brackets and removing one leaves the others")
    func chainNestsAndRemoves() {
        let loop = Loop(clock: VirtualClock())
        let log = CalloutLog()
        let a = Bracket("a", log), b = Bracket("b", log)
        loop.addCalloutInterceptor(a)
        loop.addCalloutInterceptor(b)
        loop.perform(label: "one") { log.note("one") }
        loop.run(mode: .default, timeout: 0)
        #expect(log.entries == ["a>", "b>", "one", "<b", "<a"])
        loop.removeCalloutInterceptor(a)
        #expect(loop.calloutInterceptor === b)
        loop.removeCalloutInterceptor(b)
        #expect(loop.calloutInterceptor == nil)
        loop.tearDown()
    }
}
