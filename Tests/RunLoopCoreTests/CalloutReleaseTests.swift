import Testing
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
}
