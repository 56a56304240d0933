import Testing
import PThreads
import RunLoopDiagnostics
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// Faults injected at the system-call shims (`InjectedFaults`, debug builds): for each call and
/// errno that can happen, the loop retries (EINTR), keeps running with a diagnostic, or fails
/// cleanly with a documented result (Docs/Hardening.md), and loses no message, wake-up or timer.
/// Plans are per thread, so these tests do not disturb tests running in parallel; diagnostics are
/// process-wide, so each test looks only at reports naming its own mode or items.
@Suite("FaultInjection", .needsInjectedFaults)
struct FaultInjectionTests {
    /// A real-clock loop on the calling thread with a port in `mode` (so waits block on epoll)
    /// that records every message it receives.
    final class PortLoop {
        let loop = Loop(clock: MonotonicClock.shared)
        let mode: Loop.Mode
        let received = Trace()
        let port: LoopPortSource

        init(_ name: String) throws {
            mode = Loop.Mode(name)
            let received = received
            port = try LoopPortSource(label: "\(name)-port") { message in
                if case .bytes(let bytes) = message { received.add(String(decoding: bytes, as: UTF8.self)) }
            }
            #expect(loop.add(port, mode: mode) == .added)
        }

        /// Runs until `count` messages arrived, at most 5 s.
        func runUntilReceived(_ count: Int) {
            let deadline = MonotonicClock.shared.now.advanced(by: .seconds(5))
            while received.all.count < count && MonotonicClock.shared.now < deadline {
                loop.run(mode: mode, timeout: .milliseconds(200), returnAfterSourceHandled: true)
            }
            if received.all.count < count { Issue.record("waited 5 s: only \(received.all) of \(count) messages arrived") }
        }

        deinit { loop.tearDown() }
    }

    /// Diagnostics recorded while `body` runs whose message or item mentions `tag`; the loop's
    /// failure reports are captured (the tests assert them), so they are not printed.
    func diagnostics(mentioning tag: String, _ body: () throws -> Void) rethrows -> [Diagnostic] {
        let recorder = DiagnosticsRecorder(capturing: [.systemCallFailed, .addRefused, .waitFailed, .modeUnavailable])
        try body()
        return recorder.stop().filter { $0.message.contains(tag) || ($0.item ?? "").contains(tag) }
    }

    // MARK: epoll_wait

    @Test("epoll_wait: EINTR is retried inside the wait; the timer fires, nothing reported")
    func epollWaitInterrupted() throws {
        let fixture = try PortLoop("fault-wait-eintr")
        let timer = try LoopTimer(after: .milliseconds(5), clock: MonotonicClock.shared, label: "fault-wait-eintr-timer") { [received = fixture.received] _ in
            received.add("timer")
        }
        fixture.loop.add(timer, mode: fixture.mode)
        let seen = diagnostics(mentioning: "fault-wait-eintr") {
            InjectedFaults.with(Fault(.epollWait, EINTR, times: 3)) {
                fixture.runUntilReceived(1)
                #expect(InjectedFaults.injected(.epollWait) == 3)
            }
        }
        #expect(fixture.received.all == ["timer"])
        #expect(seen.isEmpty, "EINTR is not a failure: \(seen)")
    }

    @Test("epoll_wait: EBADF fails the mode cleanly (.finished, loop.wait-failed); its message is delivered in another mode",
          arguments: [EBADF, EINVAL])
    func epollWaitFails(code: Int32) throws {
        let fixture = try PortLoop("fault-wait-\(code)")
        let other = Loop.Mode("fault-wait-\(code)-other")
        #expect(fixture.loop.add(fixture.port, mode: other) == .added)
        try fixture.port.send(Array("kept".utf8))
        var results: [Loop.RunResult] = []
        let seen = diagnostics(mentioning: "fault-wait-\(code)") {
            InjectedFaults.with(Fault(.epollWait, code)) {
                // A source-less first pass: the port's message waits for the wait that fails.
                results.append(fixture.loop.run(mode: fixture.mode, timeout: .seconds(5)))
                #expect(InjectedFaults.injected(.epollWait) == 1)
            }
            results.append(fixture.loop.run(mode: fixture.mode, timeout: .seconds(5)))   // stays failed: no spin, no hang
        }
        #expect(results == [.finished, .finished])
        #expect(seen.map(\.id) == [.waitFailed], "one report, naming the mode: \(seen)")
        #expect(fixture.received.all.isEmpty && fixture.port.pendingCount == 1, "the message is still queued")
        #expect(fixture.loop.contains(fixture.port, mode: fixture.mode), "the items stay until removed")
        fixture.loop.run(mode: other, timeout: .seconds(5), returnAfterSourceHandled: true)
        #expect(fixture.received.all == ["kept"])
    }

    // MARK: epoll_ctl

    @Test("epoll_ctl(ADD): ENOMEM, ENOSPC, EBADF refuse the add with the errno; a later add succeeds and delivers",
          arguments: [ENOMEM, ENOSPC, EBADF])
    func epollAddRefused(code: Int32) throws {
        let fixture = try PortLoop("fault-add-\(code)")
        let port = try LoopPortSource(label: "fault-add-\(code)-second") { [received = fixture.received] message in
            if case .bytes(let bytes) = message { received.add(String(decoding: bytes, as: UTF8.self)) }
        }
        var outcome: Loop.AddOutcome = .added
        let seen = diagnostics(mentioning: "fault-add-\(code)-second") {
            outcome = InjectedFaults.with(Fault(.epollAdd, code)) { fixture.loop.add(port, mode: fixture.mode) }
        }
        #expect(outcome == .refused(.systemCall(SystemCallError(call: "epoll_ctl(ADD)", code: code))))
        #expect(seen.map(\.id) == [.addRefused])
        #expect(!fixture.loop.contains(port, mode: fixture.mode))
        #expect(fixture.loop.add(port, mode: fixture.mode) == .added)
        try port.send(Array("after".utf8))
        fixture.runUntilReceived(1)
        #expect(fixture.received.all == ["after"])
        port.invalidate()
    }

    @Test("epoll_ctl(ADD) of an fd source: EINTR is retried, the add succeeds")
    func epollAddInterrupted() throws {
        let fixture = try PortLoop("fault-add-eintr")
        let pipe = try FaultTestPipe()
        defer { pipe.close() }
        let file = LoopFileSource(fd: pipe.read, events: .readable, label: "fault-add-eintr-fd") { [received = fixture.received] _ in
            received.add("readable")
        }
        let outcome = InjectedFaults.with(Fault(.epollAdd, EINTR)) {
            (fixture.loop.add(file, mode: fixture.mode), InjectedFaults.injected(.epollAdd))
        }
        #expect(outcome == (.added, 1))
        pipe.writeByte()
        fixture.runUntilReceived(1)
        #expect(fixture.received.all == ["readable"])
        file.invalidate()
    }

    @Test("epoll_ctl(ADD) of the async queue fails in one run (EBADF): the next run adds it, and submitted work wakes it")
    func asyncQueueAddFails() throws {
        let fixture = try PortLoop("fault-async")
        let loop = fixture.loop
        loop.addCommonMode(fixture.mode)   // a run services the async queue only in a common mode (L1)
        let seen = diagnostics(mentioning: "fault-async") {
            InjectedFaults.with(Fault(.epollAdd, EBADF)) {
                loop.run(mode: fixture.mode, timeout: .milliseconds(1))
                #expect(InjectedFaults.injected(.epollAdd) == 1)
            }
        }
        #expect(seen.map(\.id) == [.systemCallFailed], "\(seen)")
        let submitted = Flag()
        let submitter = startPThread(name: "fault-submitter") {
            guard loop.waitUntilWaiting(timeout: .seconds(10)) else { return }
            if loop.submit({ loop.stop() }) { submitted.set() }
        }
        let result = loop.run(mode: fixture.mode, timeout: .seconds(10))
        pthread_join(submitter, nil)
        submitted.wait("the submitter did not see the loop waiting")
        #expect(result == .stopped, "the submitted work did not wake the wait: \(result)")
    }

    @Test("epoll_ctl(DEL) of the async queue fails for a run nested in its drain (EBADF): reported once; the queue stays in the set and later runs neither fail again nor lose work")
    func asyncQueueRemoveFails() throws {
        let fixture = try PortLoop("fault-async-del")
        let loop = fixture.loop, mode = fixture.mode
        loop.addCommonMode(mode)   // a run services the async queue only in a common mode (L1)
        let ran = Trace()
        let seen = diagnostics(mentioning: "fault-async-del") {
            // The first run adds the queue's descriptor to the mode's set; a run nested in the
            // drain must not service the queue (L1), so it takes the descriptor out: that fails.
            _ = loop.submit(label: "outer") {
                ran.add("outer")
                _ = InjectedFaults.with(Fault(.epollRemove, EBADF)) { loop.run(mode: mode, timeout: .zero) }
            }
            loop.run(mode: fixture.mode, timeout: .zero)
            // Three more runs, each with work queued: the descriptor is still in the set, so
            // putting it back and adding it find it there, and each run services the queue.
            for index in 0..<3 {
                _ = loop.submit(label: "later-\(index)") { ran.add("later-\(index)") }
                loop.run(mode: fixture.mode, timeout: .zero)
            }
        }
        #expect(seen.map(\.message) == ["taking the async queue out of mode 'fault-async-del': epoll_ctl(DEL) failed: errno \(EBADF) (Bad file descriptor)"],
                "\(seen)")
        #expect(ran.all == ["outer", "later-0", "later-1", "later-2"])
    }

    @Test("epoll_ctl(MOD): a failure in the second mode throws and restores the first (all or nothing)",
          arguments: [ENOMEM, EBADF])
    func epollModifyAllOrNothing(code: Int32) throws {
        let fixture = try PortLoop("fault-mod-\(code)")
        let pipe = try FaultTestPipe()
        defer { pipe.close() }
        let file = LoopFileSource(fd: pipe.read, events: .readable, label: "fault-mod-\(code)-fd") { [received = fixture.received] _ in
            received.add("readable")
        }
        #expect(fixture.loop.add(file, mode: fixture.mode) == .added)
        #expect(fixture.loop.add(file, mode: Loop.Mode("fault-mod-\(code)-other")) == .added)
        let thrown = InjectedFaults.with(Fault(.epollModify, code, after: 1)) { () -> SystemCallError? in
            do throws(SystemCallError) { try file.setInterest([]) } catch { return error }
            return nil
        }
        #expect(thrown == SystemCallError(call: "epoll_ctl(MOD)", code: code))
        #expect(file.interest == .readable)
        // Restored in the first mode: the source still hears its descriptor there.
        pipe.writeByte()
        fixture.runUntilReceived(1)
        #expect(fixture.received.all == ["readable"])
        file.invalidate()
    }

    @Test("epoll_ctl(DEL): EBADF is reported and the port still leaves the mode; EINTR is retried",
          arguments: [EBADF, EINTR])
    func epollRemoveFails(code: Int32) throws {
        let fixture = try PortLoop("fault-del-\(code)")
        var removed = false
        let seen = diagnostics(mentioning: "fault-del-\(code)") {
            removed = InjectedFaults.with(Fault(.epollRemove, code)) {
                fixture.loop.remove(fixture.port, mode: fixture.mode) && InjectedFaults.injected(.epollRemove) == 1
            }
        }
        #expect(removed)
        #expect(!fixture.loop.contains(fixture.port, mode: fixture.mode))
        #expect(seen.map(\.id) == (code == EINTR ? [] : [.systemCallFailed]), "\(seen)")
    }

    // MARK: read and write (eventfd counters)

    @Test("read: a drain that fails (EBADF) or finds nothing (EAGAIN) leaves the port readable; the next pass resets it, no spin",
          arguments: [EBADF, EAGAIN])
    func drainFails(code: Int32) throws {
        let fixture = try PortLoop("fault-read-\(code)")
        let passes = Trace()
        let observer = LoopObserver(activities: .afterWaiting, label: "fault-read-passes") { _, _ in passes.add("AW") }
        fixture.loop.add(observer, mode: fixture.mode)
        try fixture.port.send(Array("one".utf8))
        let seen = diagnostics(mentioning: "fault-read-\(code)") {
            InjectedFaults.with(Fault(.read, code)) {
                fixture.runUntilReceived(1)
                #expect(InjectedFaults.injected(.read) == 1)
            }
            passes.reset()
            // The stale readiness costs one pass; after that the loop sleeps until its timeout.
            fixture.loop.run(mode: fixture.mode, timeout: .milliseconds(50))
        }
        #expect(passes.all.count <= 2, "the loop spun on a stale port: \(passes.all.count) wakes in 50 ms")
        #expect(seen.map(\.id) == (code == EAGAIN ? [] : [.systemCallFailed]), "\(seen)")
        try fixture.port.send(Array("two".utf8))
        fixture.runUntilReceived(2)
        #expect(fixture.received.all == ["one", "two"])
    }

    @Test("read: EINTR while draining is retried; nothing reported")
    func drainInterrupted() throws {
        let fixture = try PortLoop("fault-read-eintr")
        try fixture.port.send(Array("one".utf8))
        let seen = diagnostics(mentioning: "fault-read-eintr") {
            InjectedFaults.with(Fault(.read, EINTR, times: 2)) {
                fixture.runUntilReceived(1)
                #expect(InjectedFaults.injected(.read) == 2)
            }
        }
        #expect(seen.isEmpty, "\(seen)")
        #expect(fixture.received.all == ["one"])
    }

    @Test("write: a port whose signal fails (EBADF) keeps the message and signals again at the next send; nothing lost")
    func portSignalFails() throws {
        let fixture = try PortLoop("fault-write-port")
        let seen = try diagnostics(mentioning: "fault-write-port") {
            try InjectedFaults.with(Fault(.write, EBADF)) {
                try fixture.port.send(Array("one".utf8))
                #expect(InjectedFaults.injected(.write) == 1)
            }
            try fixture.port.send(Array("two".utf8))
        }
        #expect(seen.map(\.id) == [.systemCallFailed], "\(seen)")
        fixture.runUntilReceived(2)
        #expect(fixture.received.all == ["one", "two"])
    }

    @Test("write: EINTR on a port's signal and on stop's wake-up from another thread is retried; the loop wakes")
    func signalInterrupted() throws {
        let fixture = try PortLoop("fault-write-eintr")
        try InjectedFaults.with(Fault(.write, EINTR)) {
            try fixture.port.send(Array("one".utf8))
            #expect(InjectedFaults.injected(.write) == 1)
        }
        fixture.runUntilReceived(1)
        let loop = fixture.loop
        let woken = Flag()
        let waker = startPThread(name: "fault-waker") {
            guard loop.waitUntilWaiting(timeout: .seconds(10)) else { return }
            InjectedFaults.with(Fault(.write, EINTR, times: 2)) {
                loop.stop()   // stop's wake-up write is interrupted twice
                if InjectedFaults.injected(.write) == 2 { woken.set() }
            }
        }
        let result = loop.run(mode: fixture.mode, timeout: .seconds(10))
        pthread_join(waker, nil)
        woken.wait("the waker did not see its two interrupted writes")
        #expect(result == .stopped, "the wake-up was lost: the run ended with \(result)")
        #expect(fixture.received.all == ["one"])
    }

    // MARK: close

    @Test("close: a teardown whose closes fail (EIO) reports each after releasing the loop's lock, the first 16, then how many more")
    func teardownClosesFail() {
        let loop = Loop(clock: VirtualClock())
        for index in 0..<20 { loop.add(LoopSource(label: "fault-close-\(index)") {}, mode: Loop.Mode("fault-close-\(index)")) }
        let recorder = DiagnosticsRecorder(capturing: [.systemCallFailed, .diagnosticsDropped])
        let injected = InjectedFaults.with(Fault(.close, EIO, times: 1_000)) { () -> Int in
            loop.tearDown()
            return InjectedFaults.injected(.close)
        }
        // Only this thread plans close failures; the recorder hears the whole process.
        let seen = recorder.stop().filter { $0.message.hasPrefix("closing ") || $0.id == .diagnosticsDropped }
        #expect(injected == 21 * 2 + 2, "each mode's two descriptors, the wake-up and the async queue's")
        #expect(seen.filter { $0.id == .systemCallFailed }.count == DeferredDiagnostics.capacity, "\(seen)")
        #expect(seen.filter { $0.id == .diagnosticsDropped }.map(\.message)
                    == ["28 more diagnostics raised under a loop's lock in one critical section were dropped (the first 16 were reported)"])
        #expect(loop.allModes.count == 21 && loop.isFinished(mode: .default), "the loop is torn down all the same")
    }

    // MARK: timerfd_settime

    @Test("timerfd_settime: a timer whose descriptor cannot be armed (EINVAL, EBADF) still fires on time, reported",
          arguments: [EINVAL, EBADF])
    func timerArmFails(code: Int32) throws {
        let fixture = try PortLoop("fault-arm-\(code)")
        let loop = fixture.loop
        let timer = try LoopTimer(after: .milliseconds(20), clock: MonotonicClock.shared, label: "fault-arm-timer") { [received = fixture.received] _ in
            received.add("timer")
            loop.stop()
        }
        loop.add(timer, mode: fixture.mode)
        var result: Loop.RunResult = .finished
        let started = MonotonicClock.shared.now
        let seen = diagnostics(mentioning: "fault-arm-\(code)") {
            result = InjectedFaults.with(Fault(.timerfdSettime, code)) { loop.run(mode: fixture.mode, timeout: .seconds(5)) }
        }
        #expect(result == .stopped)
        #expect(started.duration(to: MonotonicClock.shared.now) < .seconds(4), "the timer waited for the run's timeout")
        #expect(seen.map(\.id) == [.systemCallFailed], "\(seen)")
        #expect(fixture.received.all == ["timer"])
    }

    @Test("timerfd_settime: a timer added by another thread while the loop sleeps, arming failing, still fires")
    func timerAddedDuringWaitArmFails() throws {
        let fixture = try PortLoop("fault-arm-cross")
        let loop = fixture.loop
        let mode = fixture.mode
        let timer = try LoopTimer(after: .milliseconds(20), clock: MonotonicClock.shared, label: "fault-arm-cross-timer") { _ in
            fixture.received.add("timer")
            loop.stop()
        }
        let injected = Flag()
        let adder = startPThread(name: "fault-adder") {
            guard loop.waitUntilWaiting(timeout: .seconds(10)) else { return }
            InjectedFaults.with(Fault(.timerfdSettime, EBADF)) {
                loop.add(timer, mode: mode)
                if InjectedFaults.injected(.timerfdSettime) == 1 { injected.set() }
            }
        }
        var result = Loop.RunResult.finished
        let seen = diagnostics(mentioning: "fault-arm-cross") {
            result = loop.run(mode: mode, timeout: .seconds(10))
            pthread_join(adder, nil)
        }
        injected.wait("the adder thread did not inject its fault")
        #expect(result == .stopped, "the timer was lost: the run ended with \(result)")
        #expect(seen.map(\.id) == [.systemCallFailed], "\(seen)")
        #expect(fixture.received.all == ["timer"])
    }
}
