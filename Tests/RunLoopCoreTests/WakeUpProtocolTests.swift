import Testing
import PThreads
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// The wake-up protocol's corner cases found in issue 26 (its model is Models/wakeup.pml; the
/// cross-CPU race is covered by the `Lost wake-up stress` suite and the `wakeup-stress` tool).
@Suite("Wake-up protocol")
struct WakeUpProtocolTests {
    /// The wake-up eventfd is edge-triggered: a wait that takes its event together with two
    /// ready fd sources (one batch wait) must take the wake-up with them. Before the fix the
    /// wake-up stayed "pending" with no event left, so a later `wakeUp()` on the loop's own
    /// thread (a BeforeWaiting observer that signals a source) was not noted and the next wait
    /// slept to the run's timeout with the source signalled.
    @Test("W3: a wake-up taken in a batch wait with fd events does not swallow a later own-thread wakeUp()")
    func batchWaitTakesTheWakeUp() throws {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let first = try Pipe(), second = try Pipe()
        defer { first.close(); second.close() }
        let trace = Trace()
        loop.add(LoopFileSource(fd: first.readEnd, events: .readable, label: "a") { _ in
            first.drain()
            trace.add("a")
        }, mode: .default)
        loop.add(LoopFileSource(fd: second.readEnd, events: .readable, label: "b") { _ in
            second.drain()
            trace.add("b")
        }, mode: .default)
        let source = recordingSource("signalled", trace) { loop.stop() }
        loop.add(source, mode: .default)
        let waits = Counter()
        let observer = LoopObserver(activities: .beforeWaiting) { _, _ in
            switch waits.next() {
            case 1:
                // Both pipes readable, then a wake-up written by another thread: the wait takes
                // all three events at once.
                first.writeByte()
                second.writeByte()
                let other = BackgroundThread { loop.wakeUp() }
                other.join()
            case 2:
                source.signal()
                loop.wakeUp()   // the loop's own thread: noted, nothing written
            default:
                break
            }
        }
        loop.add(observer, mode: .default)
        let start = MonotonicClock.shared.nowNanoseconds
        let result = loop.run(mode: .default, timeout: 5)
        let elapsed = MonotonicClock.shared.nowNanoseconds - start
        #expect(result == .stopped)
        #expect(trace.all == ["a", "b", "signalled"])
        #expect(elapsed < 2_000_000_000, "the wait after the own-thread wakeUp() slept \(elapsed / 1_000_000) ms of the 5 s timeout")
    }

    /// A pass that performed a source0 only polls, and the next pass looks at every queue, so
    /// from the first perform on another thread's wake-up has nothing to wake: it is not
    /// written, and what it announced runs in the next pass without the loop sleeping.
    @Test("W3: a wakeUp() from another thread during a source0's perform writes nothing; its work runs next pass")
    func wakeUpDuringAPerformWritesNothing() throws {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let trace = Trace()
        let writes = Locked<(before: UInt64?, after: UInt64?)>((nil, nil))
        let second = recordingSource("second", trace) { loop.stop() }
        let first = recordingSource("first", trace) {
            let before = loop.wakeUpWriteCount
            let other = BackgroundThread {
                second.signal()
                loop.wakeUp()
            }
            other.join()
            writes.withLock { $0 = (before, loop.wakeUpWriteCount) }
        }
        loop.add(first, mode: .default)
        loop.add(second, mode: .default)
        let sleeps = Counter()
        loop.add(LoopObserver(activities: .beforeWaiting) { _, _ in _ = sleeps.next() }, mode: .default)
        first.signal()
        #expect(loop.run(mode: .default, timeout: 5) == .stopped)
        #expect(trace.all == ["first", "second"])
        let counts = writes.withLock { $0 }
        let before = try #require(counts.before), after = try #require(counts.after)
        #expect(after == before, "the wake-up during the perform was written")
        #expect(sleeps.next() == 1, "the loop went to sleep between the two performs")
    }

    /// The window belongs to the pass that performed: a run nested in the perform has a frame
    /// of its own, whose wait may block, so a wake-up for it is written and ends that wait.
    @Test("W3: a run nested in a source0's perform is woken by another thread's wakeUp()")
    func nestedRunInAPerformIsWoken() throws {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let nested = Loop.Mode("nested-in-perform")
        let writes = Locked<(before: UInt64?, after: UInt64?)>((nil, nil))
        let results = Locked<(result: Loop.RunResult?, seconds: Double)>((nil, 0))
        let inner = LoopSource(label: "inner") { loop.stop() }
        loop.add(inner, mode: nested)
        let outer = LoopSource(label: "outer") {
            writes.withLock { $0.before = loop.wakeUpWriteCount }
            let other = BackgroundThread {
                guard loop.waitUntilWaiting(timeout: .seconds(10)) else { return }
                inner.signal()
                loop.wakeUp()
            }
            let start = MonotonicClock.shared.nowNanoseconds
            let result = loop.run(mode: nested, timeout: 5)
            let seconds = Double(MonotonicClock.shared.nowNanoseconds - start) / 1e9
            other.join()
            results.withLock { $0 = (result, seconds) }
            writes.withLock { $0.after = loop.wakeUpWriteCount }
        }
        loop.add(outer, mode: .default)
        outer.signal()
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        let (result, seconds) = results.withLock { $0 }
        #expect(result == .stopped)
        #expect(seconds < 2, "the nested run slept \(seconds) s of its 5 s timeout")
        let counts = writes.withLock { $0 }
        let before = try #require(counts.before), after = try #require(counts.after)
        #expect(after == before + 1, "the wake-up for the nested run was not written")
    }

    /// A hosted run keeps writing it (H3): its host may block before the loop looks again.
    @Test("H3: in a hosted run, a wakeUp() from another thread during a source0's perform is written")
    func wakeUpDuringAHostedPerformIsWritten() throws {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let writes = Locked<(before: UInt64?, after: UInt64?)>((nil, nil))
        let first = LoopSource(label: "first") {
            let before = loop.wakeUpWriteCount
            let other = BackgroundThread { loop.wakeUp() }
            other.join()
            writes.withLock { $0 = (before, loop.wakeUpWriteCount) }
        }
        loop.add(first, mode: .default)
        first.signal()
        let run = loop.beginHostedRun()
        #expect(run.prepare() == .no)   // the source was performed: the host must not block
        let counts = writes.withLock { $0 }
        let before = try #require(counts.before), after = try #require(counts.after)
        #expect(after == before + 1, "the wake-up during a hosted perform was not written")
        #expect(run.dispatch() == nil)
        #expect(run.end() == .stopped)
    }
}

/// A pipe whose ends are closed by `close()`.
private struct Pipe {
    let readEnd: Int32
    let writeEnd: Int32

    init() throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw PipeError(code: errno) }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    func writeByte() {
        var byte: UInt8 = 1
        #expect(write(writeEnd, &byte, 1) == 1)
    }

    func drain() {
        var buffer = [UInt8](repeating: 0, count: 16)
        _ = read(readEnd, &buffer, buffer.count)
    }

    func close() {
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
    }
}

private struct PipeError: Error { let code: Int32 }

/// Counts calls across threads.
private final class Counter: Sendable {
    private let count = Locked(0)
    func next() -> Int { count.withLock { $0 += 1; return $0 } }
}

/// Issue 26, item 4: the debug-build detector. A wake-up is lost on purpose (the sleeping run is
/// made to ignore wake-ups, so the job's enqueue writes none); the wait wakes at the bound,
/// finds the job, reports `loop.lost-wake-up` with the wake-up state, and runs it.
@Suite("Lost wake-up detector", .serialized)
struct LostWakeUpDetectorTests {
    /// A lost wake-up leaves the loop's thread blocked in its wait; a starved one is runnable.
    /// The state a stall report prints says which (the kernel's state letter and wait channel).
    @Test("the wake-up state names the loop thread's kernel state: blocked (S) while it waits")
    func stateNamesTheLoopThread() {
        let worker = LoopThread(name: "thread-state")
        defer { worker.stop() }
        #expect(worker.loop.waitUntilWaiting(timeout: .seconds(10)))
        // Between `sleeping = true` and the system call the thread is still running, so the
        // state is read again until it is blocked, for at most 10 s.
        let deadline = ContinuousClock.now + .seconds(10)
        var state = worker.loop.wakeUpStateDescription()
        while !state.contains(" loopThread=S") && ContinuousClock.now < deadline {
            state = worker.loop.wakeUpStateDescription()
        }
        #expect(state.contains(" loopThread=S"), "\(state)")
    }

    @Test("a job the loop slept through is reported with the wake-up state, and then runs")
    func reportsAndRecovers() {
        #if DEBUG
        let recorder = DiagnosticsRecorder(capturing: [.lostWakeUp])
        defer { recorder.stop() }
        let previousBound = Loop.lostWakeUpBound
        Loop.lostWakeUpBound = .milliseconds(50)
        defer { Loop.lostWakeUpBound = previousBound }
        let worker = LoopThread(name: "detector")
        defer { worker.stop() }
        #expect(worker.loop.waitUntilWaiting(timeout: .seconds(10)))
        // The defect, simulated: the sleeping run ignores wake-ups, so the job writes none.
        worker.loop.lock.withLock { $0[$0.loop.innermostFrame].ignoresWakeUps = true }
        let ran = Flag()
        Task(executorPreference: worker.loop) { ran.set() }
        ran.wait("the job the loop slept through never ran", limit: .seconds(10))
        let reports = recorder.diagnostics(withID: .lostWakeUp)
        #expect(reports.count == 1)
        #expect(reports.first?.message.contains("a Swift Concurrency job") == true)
        #expect(reports.first?.message.contains("jobs=1") == true)
        #endif
    }
}
