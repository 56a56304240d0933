import Testing
import RunLoopCore
@testable import LoopInstruments

/// The first log of seed 000_848c3fb9429876f3 (reloadData from a source0 after a source1
/// wake-up; the main-queue block jumps BeforeWaiting; the commit draws the cell).
let seedCode1Source0 = [
    "kCFRunLoopAfterWaiting", "kCFRunLoopBeforeTimers", "kCFRunLoopBeforeSources", "reloadData",
    "dispatch_get_main_queue", "kCFRunLoopBeforeTimers", "kCFRunLoopBeforeSources", "kCFRunLoopBeforeWaiting",
    "cellForRowAtIndexPath",
]

@Suite struct TextLogTests {
    /// Feeds the events CFRunLoop produces for the seed's code 1, pass by pass (L3, the steps of a
    /// pass: BeforeTimers, BeforeSources, blocks, sources0, BeforeWaiting, wait, AfterWaiting, what
    /// woke it, blocks):
    /// pass 1 sleeps and is woken by a source1; pass 2 runs the source0 and jumps to the
    /// main queue without BeforeWaiting; pass 3 reaches BeforeWaiting, where the commit
    /// observer (order 2000000) draws the cell; then the run times out.
    func seedRun() -> TraceRecorder {
        let recorder = TraceRecorder(clock: ManualClock())
        var s = EventScript(recorder: recorder)
        s.runBegin(); s.activity(.entry)
        s.activity(.beforeTimers); s.activity(.beforeSources); s.activity(.beforeWaiting)
        s.callout(.observer, "commit")
        s.recordSleep()
        s.time = at(ns: 1_000); s.wake(); s.activity(.afterWaiting)
        s.callout(.source1, "touchPort")
        s.pass = 2
        s.activity(.beforeTimers); s.activity(.beforeSources)
        s.callout(.source0, "eventQueue") { recorder.log("reloadData") }
        s.callout(.mainQueue, "mainQueue") { recorder.log("dispatch_get_main_queue") }
        s.pass = 3
        s.activity(.beforeTimers); s.activity(.beforeSources); s.activity(.beforeWaiting)
        s.callout(.observer, "commit") { recorder.log("cellForRowAtIndexPath") }
        s.recordSleep()
        s.time = at(ns: 2_000); s.wake(); s.activity(.afterWaiting); s.activity(.exit); s.runEnd(.timedOut)
        return recorder
    }

    @Test func seedFilterReproducesTheSeedLogLineForLine() {
        #expect(seedRun().lines(.seed) == seedCode1Source0)
    }

    @Test func unfilteredLogHasEveryActivityByCFNameAndTheLogLines() {
        let lines = seedRun().lines()
        #expect(lines.first == "kCFRunLoopEntry")
        #expect(lines.last == "kCFRunLoopExit")
        #expect(lines.filter { $0 == "kCFRunLoopBeforeWaiting" }.count == 2)
        #expect(lines.filter { $0 == "kCFRunLoopAfterWaiting" }.count == 2)
        #expect(lines.count == 15)
    }

    @Test func windowsCountOccurrencesFromTheStart() {
        let recorder = seedRun()
        let secondTurnOnward = TextLogFilter.cfNames.window(from: .activity(.afterWaiting, occurrence: 2), to: nil)
        #expect(recorder.lines(secondTurnOnward) == ["kCFRunLoopAfterWaiting", "kCFRunLoopExit"])
        let fromLog = TextLogFilter(activities: [], start: .log("reloadData"), end: .log("cellForRowAtIndexPath"))
        #expect(recorder.lines(fromLog) == ["reloadData", "dispatch_get_main_queue"])
        let missingStart = TextLogFilter.cfNames.window(from: .log("never"), to: nil)
        #expect(recorder.lines(missingStart).isEmpty)
    }

    @Test func verboseFormShowsPassModeTimeAndNestedCallouts() {
        let lines = seedRun().verboseText().split(separator: "\n").map(String.init)
        #expect(lines.first == "#0 +0.000ms t1 pass 1 [kCFRunLoopDefaultMode] run begin")
        let reload = lines.first { $0.hasSuffix("reloadData") }
        #expect(reload == "#15 +0.001ms t1 pass 2 [kCFRunLoopDefaultMode]   reloadData")
        #expect(lines.contains("#14 +0.001ms t1 pass 2 [kCFRunLoopDefaultMode] → source0 eventQueue"))
        #expect(lines.last == "#30 +0.002ms t1 pass 3 [kCFRunLoopDefaultMode] run end timedOut")
    }

    @Test func otherEntryKindsHaveReadableLines() {
        let recorder = TraceRecorder(clock: ManualClock())
        recorder.record(PoolRecord(operation: .popAndPush, entriesBefore: 505, entriesAfter: 1))
        recorder.record(CommitRecord(frame: 2, reason: "BeforeWaiting", phases: [.init(name: "layout", layers: ["a", "b"]), .init(name: "display")]))
        recorder.mark("dirty a")
        #expect(recorder.lines(.everything) == [
            "pool popAndPush entries 505→1 released 504",
            "commit #2 [BeforeWaiting] layout(a,b) display",
            "mark dirty a",
        ])
    }

    @Test func formatsMillisecondsAndBytes() {
        #expect(TextLogExporter.formatMilliseconds(200_000_000) == "200.000")
        #expect(TextLogExporter.formatMilliseconds(1_234_567) == "1.235")
        #expect(TextLogExporter.formatBytes(3 * 1_048_576 / 2) == "1.5MiB")
        #expect(TextLogExporter.formatBytes(512) == "512B")
    }
}
