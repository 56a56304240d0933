import PThreads
import Testing
import RunLoopCore
import Autorelease
@testable import LoopInstruments

/// Instruments attached to a real `Loop` on a virtual clock.
@Suite struct LoopRunTests {
    /// A block and a one-shot timer at 0.5 s in a 1 s run. CF order (L3: a pass sends BeforeTimers
    /// and BeforeSources, runs blocks and sources0, then waits between BeforeWaiting and
    /// AfterWaiting): Entry; pass 1
    /// BeforeTimers, BeforeSources, blocks (the block), no source0 so no poll → BeforeWaiting,
    /// sleep (the clock jumps to the timer), wake, AfterWaiting, the timer fires; the mode is
    /// now empty (timer done, block gone) → Exit with `.finished`.
    @Test func recorderCapturesTheExactSequenceOfAVirtualClockRun() throws {
        let clock = VirtualClock()
        let loop = Loop(clock: clock)
        let recorder = TraceRecorder()
        recorder.attach(to: loop)
        recorder.observeActivities(on: loop, mode: .default)
        loop.perform(label: "block") { recorder.log("block ran") }
        let timer = try LoopTimer(after: .milliseconds(500), clock: clock, label: "timer") { _ in recorder.log("timer fired") }
        loop.add(timer, mode: .default)
        let result = loop.run(mode: .default, timeout: 1)
        #expect(result == .finished)

        let kinds = recorder.entries.map(\.kind)
        #expect(kinds == [
            .runBegin, .activity(.entry), .activity(.beforeTimers), .activity(.beforeSources),
            .calloutBegin(.block), .log, .calloutEnd(.block),
            .activity(.beforeWaiting), .sleep, .wake, .activity(.afterWaiting),
            .calloutBegin(.timer), .log, .calloutEnd(.timer),
            .activity(.exit), .runEnd(.finished),
        ])
        let entries = recorder.entries
        #expect(entries.allSatisfy { $0.mode == .default })
        // The timer fired after the virtual jump to 0.5 s; the log inside it has that time.
        let timerLog = try #require(entries.first { $0.label == "timer fired" })
        #expect(timerLog.time == at(ms: 500))
        #expect(entries.first { $0.kind == .calloutBegin(.timer) }?.label == "timer")
        #expect(entries.last!.pass >= entries.first!.pass)
        #expect(recorder.lines() == [
            "kCFRunLoopEntry", "kCFRunLoopBeforeTimers", "kCFRunLoopBeforeSources", "block ran",
            "kCFRunLoopBeforeWaiting", "kCFRunLoopAfterWaiting", "timer fired", "kCFRunLoopExit",
        ])
    }

    /// The seed's code 1 on our loop: a source1 message wakes the sleeping loop, its handler
    /// signals the event source0, which logs `reloadData` and queues a main-queue block; the
    /// queue is serviced without BeforeWaiting (didDispatchPortLastTime was false); the next
    /// pass reaches BeforeWaiting where the commit observer (order 2000000) draws the cell.
    @Test func seedCode1ReproducedOnTheLoop() throws {
        let clock = VirtualClock()
        let loop = Loop(clock: clock)
        let recorder = TraceRecorder()
        recorder.attach(to: loop)
        recorder.observeActivities(on: loop)
        let needsDisplay = Flag()
        let eventQueue = LoopSource(label: "eventQueue") {
            recorder.log("reloadData")
            needsDisplay.set(true)
            loop.submit(label: "mainQueue") { recorder.log("dispatch_get_main_queue") }
        }
        loop.add(eventQueue, mode: .common)
        let touches = try LoopPortSource(label: "touches") { _ in eventQueue.signal() }
        loop.add(touches, mode: .common)
        let commit = LoopObserver(activities: [.beforeWaiting, .exit], order: 2_000_000, label: "commit") { _, _ in
            if needsDisplay.take() { recorder.log("cellForRowAtIndexPath") }
        }
        loop.add(commit, mode: .common)
        try touches.send([1])
        loop.run(mode: .default, timeout: 1)
        #expect(recorder.lines(.seed) == seedCode1Source0)
    }

    @Test func lagMonitorOnTheLoopReportsA200msCalloutOnce() throws {
        let clock = VirtualClock()
        let loop = Loop(clock: clock)
        let reports = ReportBox()
        let monitor = try LagMonitor(threshold: .milliseconds(100)) { reports.append($0) }
        monitor.install(on: loop)
        #expect(loop.calloutInterceptor === monitor)
        loop.perform(label: "slowWork") {
            clock.advance(seconds: 0.2)
            monitor.check()
            monitor.check()
        }
        loop.run(mode: .default, timeout: 0)
        #expect(reports.labels == ["slowWork"])
        #expect(monitor.reports.first?.calloutKind == .block)
        #expect(monitor.reports.first?.span == .milliseconds(200))
        monitor.uninstall()
        #expect(loop.calloutInterceptor == nil)
        #expect(loop.observers(in: .default).isEmpty)
    }

    @Test func lagMonitorIgnores10msTurns() throws {
        let clock = VirtualClock()
        let loop = Loop(clock: clock)
        let monitor = try LagMonitor(threshold: .milliseconds(100))
        monitor.checksAtCalloutEnd = true                // a perfect watchdog on the virtual clock
        monitor.install(on: loop)
        let fired = Counter()
        let timer = try LoopTimer(after: .milliseconds(50), clock: clock, interval: .milliseconds(50), label: "tick") { timer in
            clock.advance(seconds: 0.01)
            if fired.increment() == 10 { timer.invalidate() }
        }
        loop.add(timer, mode: .default)
        loop.run(mode: .default, timeout: 5)
        #expect(fired.value == 10)
        #expect(monitor.reports.isEmpty)
        #expect(monitor.completedTurns >= 10)
        #expect(monitor.longestTurn == .milliseconds(10))
    }

    @Test func memoryProbeSamplesAtActivitiesWithPoolStatistics() {
        let clock = VirtualClock()
        let loop = Loop(clock: clock)
        let recorder = TraceRecorder()
        recorder.attach(to: loop)
        let probe = MemoryProbe(recorder: recorder)
        probe.install(on: loop, activities: [.beforeWaiting, .exit], mode: .default)
        loop.perform(label: "noop") {}
        loop.run(mode: .default, timeout: 0.25)
        let labels = probe.samples.map(\.label)
        #expect(labels.first == "kCFRunLoopBeforeWaiting")
        #expect(labels.last == "kCFRunLoopExit")
        #expect(probe.samples.allSatisfy { $0.residentBytes > 0 })
        #expect(probe.samples.allSatisfy { ($0.heapInUseBytes > 0) == glibcMallocIsActive })
        #expect(recorder.entries.filter { if case .memory = $0.kind { true } else { false } }.count == labels.count)
        probe.uninstall()
        #expect(loop.observers(in: .default).isEmpty)
    }

    @Test func instrumentsDoNotKeepTheLoopAlive() throws {
        weak var weakLoop: Loop?
        let monitor = try LagMonitor(threshold: .seconds(1))
        let probe = MemoryProbe(readsProcess: false, poolStatistics: { .zero })
        let recorder = TraceRecorder()
        do {
            let loop = Loop(clock: VirtualClock())
            weakLoop = loop
            recorder.attach(to: loop)
            monitor.install(on: loop)
            probe.install(on: loop)
            loop.run(mode: .default, timeout: 0)
        }
        #expect(weakLoop == nil)
        monitor.uninstall()                              // harmless once the loop is gone
        probe.uninstall()
    }

    @Test func poolStatisticsSeeAutoreleasedObjects() {
        final class Node {}
        let probe = MemoryProbe(readsProcess: false)
        let before = probe.sample(label: "before")
        let token = AutoreleasePool.push()
        for _ in 0..<600 { AutoreleasePool.autorelease(Node()) }
        let inside = probe.sample(label: "inside")
        AutoreleasePool.pop(token)
        let after = probe.sample(label: "after")
        #expect(inside.pool.pendingEntries - before.pool.pendingEntries == 601)   // 600 objects + the boundary
        #expect(inside.pool.pages >= 2)                                             // 505 slots per page
        #expect(inside.pool.peakEntries >= inside.pool.pendingEntries)
        #expect(after.pool.pendingEntries == before.pool.pendingEntries)
    }
}

final class Flag: @unchecked Sendable {
    // Sendable: guarded by `lock`.
    private let lock = PThreadMutex()
    private var value = false
    func set(_ newValue: Bool) { lock.withLock { value = newValue } }
    func take() -> Bool { lock.withLock { defer { value = false }; return value } }
}

final class Counter: @unchecked Sendable {
    // Sendable: guarded by `lock`.
    private let lock = PThreadMutex()
    private var count = 0
    func increment() -> Int { lock.withLock { count += 1; return count } }
    var value: Int { lock.withLock { count } }
}
