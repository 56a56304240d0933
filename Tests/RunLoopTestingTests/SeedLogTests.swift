import RunLoopTesting
import Testing

/// The three logs of seed 000 ("reloadData then dispatch_get_main_queue sometimes works"), as
/// published, each re-expressed with the toolkit in ten lines or fewer. The app: a port (the HID
/// event port, a source1) whose handler signals UIKit's event source0; the table view's layout
/// logs `cellForRowAtIndexPath`. The expected lines are the seed's, in the toolkit's names.
@Suite struct SeedLogsWithTheToolkit {
    @Test func code1FromASource0TheBlockOvertakesTheLayout() throws {
        try LoopTestHarness.run { h in
            let table = Layer(name: "tableView"); table.onLayout = { _ in h.log("cellForRowAtIndexPath") }
            let events = h.addSource("__handleEventQueue") {
                table.setNeedsLayout(); h.log("reloadData"); h.submit { h.log("dispatch_get_main_queue") }
            }
            h.send(to: try h.addPort("__IOHIDEventSystemClientQueueCallback") { _ in events.signal() })
            h.advance(by: .milliseconds(100))
            h.expectSteps("afterWaiting · beforeTimers · beforeSources · log(reloadData) · log(dispatch_get_main_queue) · beforeTimers · beforeSources · beforeWaiting · log(cellForRowAtIndexPath)", selection: .seed)
        }
    }

    @Test func code1FromAButtonTheLateFlushLaysOutFirst() throws {
        try LoopTestHarness.run { h in
            let table = Layer(name: "tableView"); table.onLayout = { _ in h.log("cellForRowAtIndexPath") }
            let events = h.addSource("__handleEventQueue") {
                table.setNeedsLayout(); h.log("reloadData"); h.submit { h.log("dispatch_get_main_queue") }
                try? h.clock.advance(by: .milliseconds(20))   // the rest of the button's handling: over one frame
            }
            h.send(to: try h.addPort("__IOHIDEventSystemClientQueueCallback") { _ in events.signal() })
            h.advance(by: .milliseconds(100))
            h.expectSteps("afterWaiting · beforeTimers · beforeSources · log(reloadData) · log(cellForRowAtIndexPath) · log(dispatch_get_main_queue) · beforeTimers · beforeSources · beforeWaiting", selection: .seed)
        }
    }

    @Test func code2TheNestedBlockRunsAfterTheSleepAfterTheLayout() throws {
        try LoopTestHarness.run { h in
            let table = Layer(name: "tableView"); table.onLayout = { _ in h.log("cellForRowAtIndexPath") }
            let events = h.addSource("__handleEventQueue") {
                h.submit("block1") { h.log("dispatch_get_main_queue_1"); table.setNeedsLayout(); h.log("reloadData")
                    h.submit("block2") { h.log("dispatch_get_main_queue_2") } }
            }
            h.send(to: try h.addPort("__IOHIDEventSystemClientQueueCallback") { _ in events.signal() })
            h.advance(by: .milliseconds(100))
            h.expectSteps("afterWaiting · beforeTimers · beforeSources · log(dispatch_get_main_queue_1) · log(reloadData) · beforeTimers · beforeSources · beforeWaiting · log(cellForRowAtIndexPath) · afterWaiting · log(dispatch_get_main_queue_2) · beforeTimers · beforeSources · beforeWaiting",
                          selection: LoopStepSelection(kinds: [.activities, .logs], from: .activity(.afterWaiting), to: .wake(occurrence: 2)))
        }
    }
}
