import RunLoopKit
import Testing

/// The README's first example, run as written: if the README's API drifts, this stops compiling.
@Suite("README example")
struct ReadmeExampleTests {
    @Test("the first-look example produces the seed's order: reloadData, main queue, then layout")
    func firstLook() {
        let clock = VirtualClock()
        let loop = Loop(clock: clock)
        let pipeline = CommitPipeline(clock: LoopTransactionClock(clock))
        var lines: [String] = []
        pipeline.asCurrent {
            let standard = StandardObservers(installedOn: loop, pipeline: pipeline)
            let recorder = TraceRecorder()
            recorder.attach(to: loop)
            recorder.observeActivities(on: loop)

            let table = Layer(name: "tableView")
            table.onLayout = { _ in recorder.log("cellForRowAtIndexPath") }
            let events = LoopSource(label: "__handleEventQueue", onOwnerThreadOf: loop) {
                table.setNeedsLayout()
                recorder.log("reloadData")
                loop.submit { recorder.log("dispatch_get_main_queue") }
            }
            loop.add(events, mode: .default)
            events.signal()
            loop.run(mode: .default, timeout: .milliseconds(100))
            lines = recorder.lines()
            standard.uninstall()
            loop.tearDown()
        }
        // CF rules: the source0 runs in the first pass, the main-queue fast path follows at once,
        // and the layout waits for the next BeforeWaiting.
        #expect(Array(lines.prefix(9)) == [
            "kCFRunLoopEntry", "kCFRunLoopBeforeTimers", "kCFRunLoopBeforeSources", "reloadData",
            "dispatch_get_main_queue", "kCFRunLoopBeforeTimers", "kCFRunLoopBeforeSources",
            "kCFRunLoopBeforeWaiting", "cellForRowAtIndexPath",
        ])
    }
}
