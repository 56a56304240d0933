import Testing
import PThreads
import Synchronization
import CRunLoopShims
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// Other threads acting on a sleeping loop (real clock). Each test waits for `isWaiting`
/// before acting, so the traces are exact; the 10 s run timeouts are only a safety net.
/// Must pass under `swift test --sanitize=thread --filter CrossThread`.
@Suite("CrossThread")
struct CrossThread {
    /// Runs `act` on another thread once `loop` is asleep.
    private func onceWaiting(_ loop: Loop, _ act: @escaping @Sendable () -> Void) -> BackgroundThread {
        BackgroundThread {
            guard loop.waitUntilWaiting(timeout: .seconds(10)) else {
                Issue.record("the loop did not go to sleep within 10 s; the cross-thread action was not taken")
                return
            }
            act()
        }
    }

    @Test("waitUntilWaiting: false at its deadline for a loop nobody runs, true once the loop sleeps")
    func waitUntilWaitingReportsBoth() {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        loop.add(LoopSource {}, mode: .default)
        let idle = Flag()
        let checker = BackgroundThread {
            if !loop.waitUntilWaiting(timeout: .milliseconds(5)) { idle.set() }
            if loop.waitUntilWaiting(timeout: .seconds(10)) { loop.stop() }
        }
        idle.wait("waitUntilWaiting did not give up at its deadline on an idle loop")
        #expect(loop.run(mode: .default, timeout: 10) == .stopped)
        checker.join()
    }

    @Test("S1 W3: signal + wakeUp from another thread")
    func signalAndWakeUp() {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let trace = tracing(loop)
        let source = recordingSource("perform", trace)
        loop.add(source, mode: .default)
        let other = onceWaiting(loop) {
            source.signal()
            loop.wakeUp()
        }
        #expect(loop.run(mode: .default, timeout: 10, returnAfterSourceHandled: true) == .handledSource)
        other.join()
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "BT", "BS", "perform", "X"])
    }

    @Test("B1: perform + wakeUp from another thread runs the block after the wake")
    func performAndWake() {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let trace = tracing(loop)
        loop.add(LoopSource(label: "idle") {}, mode: .default)
        let other = onceWaiting(loop) {
            loop.performAndWake(label: "xblock") {
                trace.add("xblock")
                loop.stop()
            }
        }
        #expect(loop.run(mode: .default, timeout: 10) == .stopped)
        other.join()
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "xblock", "X"])
    }

    @Test("S7 S8 L-c: port messages from another thread, one per pass, in order")
    func portMessages() throws {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let trace = tracing(loop)
        let received = Trace()
        let port = try LoopPortSource(label: "port") { message in
            switch message {
            case .bytes(let bytes): received.add("bytes\(bytes)")
            case .value(let value): received.add("value \(value)")
            }
            trace.add("m")
            if received.all.count == 3 { loop.stop() }
        }
        loop.add(port, mode: .default)
        let failures = Trace()
        let other = onceWaiting(loop) {
            do {
                try port.send([1, 2])
                try port.send(value: 42)
                try port.send([3])
            } catch {
                failures.add("\(error)")
            }
        }
        #expect(loop.run(mode: .default, timeout: 10) == .stopped)
        other.join()
        #expect(failures.all == [])
        #expect(received.all == ["bytes[1, 2]", "value 42", "bytes[3]"])
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "m", "BT", "BS", "BW", "AW", "m",
                              "BT", "BS", "BW", "AW", "m", "X"])
        #expect(port.pendingCount == 0)
    }

    @Test("T6 setNextFireDate from another thread while the loop's own thread fires the timer and re-arms it in its callout: it keeps firing, and the last date set stands in the timer and its mode (the lock rule of LoopTimer's schedule; ThreadSanitizer runs this in CI)")
    func setNextFireDateRacesTheFiringPass() {
        let seen = Locked<[String]>([])
        runOnNewPThread {
            let loop = Loop.current
            let base = loop.clock.now
            let fires = Locked(0)
            let timer = try! LoopTimer(fireAt: base, interval: .seconds(3600)) { timer in
                fires.withLock { $0 += 1 }
                timer.setNextFireDate(base)   // due again at once, on the loop's own thread
            }
            loop.add(timer, mode: .default)
            let setterDone = Atomic<Bool>(false)
            let setter = startPThread(name: "timer-setter") {
                for index in 0..<5_000 { timer.setNextFireDate(base.advanced(by: .nanoseconds(index % 2))) }
                setterDone.store(true, ordering: .releasing)
            }
            // Passes until the setter is done: bounded by its 5,000 calls, and by a count.
            var passes = 0
            while !setterDone.load(ordering: .acquiring) && passes < 50_000_000 {
                loop.run(mode: .default, timeout: 0)
                passes += 1
            }
            pthread_join(setter, nil)
            loop.run(mode: .default, timeout: 0)   // the setter's last date is past: it fires
            let last = base.advanced(by: .seconds(50))
            timer.setNextFireDate(last)
            let fired = fires.withLock { $0 }
            seen.withLock {
                $0 = ["setter done \(setterDone.load(ordering: .acquiring))", "fired \(fired > 0)",
                      "timer \(timer.nextFireDate == last)", "mode \(loop.nextTimerFireDate(in: .default) == last)"]
            }
            timer.invalidate()
        }
        #expect(seen.withLock { $0 } == ["setter done true", "fired true", "timer true", "mode true"])
    }

    @Test("T6 the timer's schedule changes hands: setNextFireDate from one thread while another adds the timer to the loop's mode and removes it, and the loop's thread fires it; the last date set stands in the timer and in each mode holding it, in a mode and out of every mode (the lock rule of LoopTimer's schedule; ThreadSanitizer runs this in CI)")
    func setNextFireDateRacesAddAndRemove() {
        let seen = Locked<[String]>([])
        runOnNewPThread {
            let loop = Loop.current
            let base = loop.clock.now
            let timer = try! LoopTimer(fireAt: base, interval: .seconds(3600)) { _ in }
            loop.add(timer, mode: .default)
            let finished = Atomic<Int>(0)
            let setter = startPThread(name: "timer-setter") {
                for index in 0..<5_000 { timer.setNextFireDate(base.advanced(by: .nanoseconds(index % 2))) }
                finished.add(1, ordering: .releasing)
            }
            // Removes and adds 1,000 times each, ending with the timer in the mode.
            let mover = startPThread(name: "timer-mover") {
                for index in 0..<2_000 {
                    if index % 2 == 0 { loop.remove(timer, mode: .default) } else { loop.add(timer, mode: .default) }
                }
                finished.add(1, ordering: .releasing)
            }
            // Passes until both are done: bounded by their calls, and by a count.
            var passes = 0
            while finished.load(ordering: .acquiring) < 2 && passes < 50_000_000 {
                loop.run(mode: .default, timeout: 0)
                passes += 1
            }
            pthread_join(setter, nil)
            pthread_join(mover, nil)
            let other = Loop.Mode("other")
            let inMode = base.advanced(by: .seconds(50))
            timer.setNextFireDate(inMode)
            var facts = ["both done \(finished.load(ordering: .acquiring) == 2)",
                         "in mode: timer \(timer.nextFireDate == inMode), mode \(loop.nextTimerFireDate(in: .default) == inMode)"]
            // Still held by a second mode after the first drops it: the loop keeps the schedule.
            loop.add(timer, mode: other)
            loop.remove(timer, mode: .default)
            let inOther = base.advanced(by: .seconds(60))
            timer.setNextFireDate(inOther)
            facts.append("other mode: \(loop.nextTimerFireDate(in: other) == inOther)")
            // In no mode: the timer's lock keeps it; the mode that takes it next queues that date.
            loop.remove(timer, mode: other)
            let outside = base.advanced(by: .seconds(70))
            timer.setNextFireDate(outside)
            loop.add(timer, mode: .default)
            facts.append("out and back: timer \(timer.nextFireDate == outside), mode \(loop.nextTimerFireDate(in: .default) == outside)")
            seen.withLock { $0 = facts }
            timer.invalidate()
        }
        #expect(seen.withLock { $0 } == ["both done true", "in mode: timer true, mode true", "other mode: true",
                                         "out and back: timer true, mode true"])
    }

    @Test("W1: stop from another thread ends the sleeping run")
    func stopFromAnotherThread() {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let trace = tracing(loop)
        loop.add(LoopSource(label: "idle") {}, mode: .default)
        let other = onceWaiting(loop) { loop.stop() }
        #expect(loop.run(mode: .default, timeout: 10) == .stopped)
        other.join()
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "X"])
    }

    @Test("T6 L-g: a timer added while the loop waits wakes it on time, with no extra cycle")
    func timerAddedWhileTheLoopWaits() throws {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let trace = tracing(loop)
        loop.add(LoopSource(label: "idle") {}, mode: .default)
        let timer = try LoopTimer(after: .zero, clock: loop.clock, label: "timer") { _ in
            trace.add("timer")
            loop.stop()
        }
        let other = onceWaiting(loop) {
            timer.setNextFireDate(loop.clock.now.advanced(by: .milliseconds(20)))
            loop.add(timer, mode: .default)
        }
        #expect(loop.run(mode: .default, timeout: 10) == .stopped)
        other.join()
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "timer", "X"])
    }

    @Test("T3: timer deadlines changed while the loop is awake reach the timerfd before it sleeps")
    func timerDeadlinesSyncedBeforeEachWait() throws {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let trace = Trace()
        loop.add(LoopSource(label: "idle") {}, mode: .default)
        // Each fire moves the deadline on the loop thread (no system call then); every later
        // fire needs a blocking wait on the timerfd, so a deadline not armed before the wait
        // would sleep until the 10 s safety timeout.
        let repeating = try LoopTimer(after: .milliseconds(2), clock: loop.clock, interval: .milliseconds(2), label: "tick") { _ in
            trace.add("tick")
            if trace.all.count == 3 { loop.stop() }
        }
        loop.add(repeating, mode: .default)
        // A one-shot added, then removed, while the loop is awake: its earlier deadline must
        // not stay armed either (it would wake the wait for nothing).
        let oneShot = try LoopTimer(after: .milliseconds(1), clock: loop.clock, label: "removed") { _ in trace.add("removed") }
        loop.add(oneShot, mode: .default)
        loop.remove(oneShot, mode: .default)
        let passes = loop.passCount
        #expect(loop.run(mode: .default, timeout: 10) == .stopped)
        #expect(trace.all == ["tick", "tick", "tick"])
        // One pass per tick: no wake-up with nothing to do (no L-g).
        #expect(loop.passCount - passes == 3)
    }

    @Test("S5: a source added and signalled while the loop waits, then wakeUp")
    func sourceAddedWhileTheLoopWaits() {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let trace = tracing(loop)
        loop.add(LoopSource(label: "idle") {}, mode: .default)
        let late = recordingSource("late", trace)
        let other = onceWaiting(loop) {
            loop.add(late, mode: .default)
            late.signal()
            loop.wakeUp()
        }
        #expect(loop.run(mode: .default, timeout: 10, returnAfterSourceHandled: true) == .handledSource)
        other.join()
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "BT", "BS", "late", "X"])
    }

    @Test("submit from another thread wakes a loop running a common mode")
    func asyncFromAnotherThread() {
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let trace = tracing(loop)
        loop.add(LoopSource(label: "idle") {}, mode: .default)
        let other = onceWaiting(loop) { loop.submit(label: "q") { trace.add("q") } }
        #expect(loop.run(mode: .default, timeout: 10, returnAfterSourceHandled: true) == .handledSource)
        other.join()
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "q", "X"])
    }

    @Test("fd source: a pipe written by another thread; the loop never reads it")
    func fileSourceFromAnotherThread() {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer { close(readEnd); close(writeEnd) }
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        let trace = tracing(loop)
        let reader = LoopFileSource(fd: readEnd, events: .readable, label: "pipe") { events in
            trace.add("readable:\(events.contains(.readable))")
            var byte: UInt8 = 0
            trace.add("read:\(read(readEnd, &byte, 1))")
        }
        loop.add(reader, mode: .default)
        let other = onceWaiting(loop) {
            var byte: UInt8 = 7
            _ = write(writeEnd, &byte, 1)
        }
        #expect(loop.run(mode: .default, timeout: 10, returnAfterSourceHandled: true) == .handledSource)
        other.join()
        #expect(trace.all == ["E", "BT", "BS", "BW", "AW", "readable:true", "read:1", "X"])
    }

    @Test("W6: thread exit tears the loop down: cancels, drops blocks, closes every fd")
    func threadExitTeardown() async {
        // In a child process, so no concurrently running test opens or closes descriptors. The
        // harness and libdispatch may still create a descriptor or two lazily, so 20 loop
        // lifetimes are checked at once: a loop owns at least 4 descriptors, a leak would show 80.
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            runOnNewPThread { Loop.current.add(LoopSource {}, mode: .default) }  // warm-up
            let before = openDescriptors()
            let trace = Trace()
            for _ in 0..<20 {
                runOnNewPThread {
                    let loop = Loop.current
                    let source = LoopSource(label: "s", cancel: { _, mode in trace.add("cancel \(mode)") }) {}
                    loop.add(source, mode: .default)
                    loop.add(source, mode: "Other")
                    loop.add(try! LoopPortSource { _ in }, mode: .default)
                    loop.add(try! LoopTimer(after: 100, clock: loop.clock) { _ in }, mode: .common)
                    loop.perform { trace.add("dropped block ran") }
                    loop.perform(inMode: "Never") { trace.add("dropped block ran") }
                    loop.submit { trace.add("dropped async ran") }
                    loop.run(mode: "Other", timeout: 0)  // not common: the block and async work stay queued
                }
            }
            let leaked = openDescriptors().subtracting(before)
            let cancels = trace.all == Array(repeating: ["cancel kCFRunLoopDefaultMode", "cancel Other"], count: 20).flatMap { $0 }
            print("few-fds \(leaked.count < 4) \(leaked.sorted()) loops \(LoopRegistry.shared.count) cancels \(cancels) \(trace.all.prefix(4))")
            exit(0)
        }
        let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        #expect(output.contains("few-fds true"), "child reported: \(output)")
        #expect(output.contains("loops 0 cancels true"), "child reported: \(output)")
    }

    @Test("W6: 200 threads each with a busy loop leave no heap behind")
    func threadExitLeaksNoMemory() async {
        await #expect(processExitsWith: .success) {
            @Sendable func lifetime() {
                runOnNewPThread {
                    let loop = Loop.current
                    loop.add(LoopSource {}, mode: .common)
                    loop.add(LoopObserver(activities: .allActivities) { _, _ in }, mode: .default)
                    loop.add(try! LoopPortSource { _ in }, mode: "Other")
                    loop.add(try! LoopTimer(after: 0, clock: loop.clock, interval: 1) { _ in }, mode: .default)
                    loop.perform {}
                    loop.submit {}
                    loop.run(mode: .default, timeout: 0)
                    loop.perform(inMode: "Never") {}
                }
            }
            for _ in 0..<50 { lifetime() }
            let before = rlk_heap_in_use()
            for _ in 0..<200 { lifetime() }
            let after = rlk_heap_in_use()
            // A leaked loop (modes, frames, items) is kilobytes; 200 of them would show.
            exit(after <= before + 16_384 ? 0 : 1)
        }
    }
}
