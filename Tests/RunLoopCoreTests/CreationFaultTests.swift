import Testing
import RunLoopDiagnostics
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// Descriptors that cannot be created (EMFILE, ENFILE, ENOMEM) and a wake-up whose write
/// fails: each is returned or thrown with a diagnostic, and nothing stops the process.
extension FaultInjectionTests {
    @Test("eventfd EMFILE: LoopPortSource's init throws .systemCall; the next port is made", arguments: [EMFILE, ENOMEM])
    func portCreationFails(code: Int32) throws {
        let label = "fault-port-create-\(code)"
        let seen = diagnostics(mentioning: label) {
            InjectedFaults.with(Fault(.eventfd, code)) { () -> Void in
                _ = #expect(throws: LoopError.systemCall(SystemCallError(call: "eventfd", code: code))) {
                    _ = try LoopPortSource(label: label) { _ in }
                }
            }
        }
        #expect(seen.map(\Diagnostic.id) == [DiagnosticID.systemCallFailed], "\(seen)")
        let loop = Loop(clock: VirtualClock())
        let port = try LoopPortSource(label: label) { _ in }
        #expect(loop.add(port, mode: .default) == .added)
        port.invalidate()
    }

    @Test("a mode whose descriptors cannot be made: add is refused (.systemCall), run returns .finished with loop.mode-unavailable, the next add creates it",
          arguments: [(InjectedFaults.Call.epollCreate, "epoll_create1", ENOMEM),
                      (.eventfd, "eventfd", EMFILE),            // a virtual clock's timer descriptor
                      (.epollAdd, "epoll_ctl(ADD)", ENOMEM)])
    func modeCreationFails(call: InjectedFaults.Call, name: String, code: Int32) {
        let loop = Loop(clock: VirtualClock())
        let mode = Loop.Mode("fault-mode-\(name)-\(code)")
        let trace = Trace()
        let source = LoopSource(label: "fault-mode-source-\(name)") { trace.add("performed") }
        var first = Loop.AddOutcome.added
        var run = Loop.RunResult.stopped
        let seen = diagnostics(mentioning: "\(mode)") {
            InjectedFaults.with(Fault(call, code)) {
                first = loop.add(source, mode: mode)
            }
            run = loop.run(mode: mode, timeout: .seconds(1))
        }
        #expect(first == .refused(.systemCall(SystemCallError(call: name, code: code))))
        #expect(run == .finished)
        #expect(seen.map(\.id).contains(.modeUnavailable), "\(seen)")
        #expect(seen.filter { $0.id == .modeUnavailable }.count == 2, "one at creation, one at run: \(seen)")
        #expect(!loop.allModes.contains(mode))
        // The next add tries again and succeeds; the mode then runs its item.
        #expect(loop.add(source, mode: mode) == .added)
        source.signal()
        #expect(loop.run(mode: mode, timeout: .seconds(1), returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["performed"])
    }

    @Test("a block performed for a mode that cannot be created waits for it by name: the mode's first run after it exists runs the block")
    func blockForAModeNotMadeYet() {
        let loop = Loop(clock: VirtualClock())
        let mode = Loop.Mode("fault-block-mode")
        let trace = Trace()
        var queued = false
        let seen = diagnostics(mentioning: "fault-block") {
            queued = InjectedFaults.with(Fault(.epollCreate, EMFILE)) {
                loop.perform(inMode: mode, label: "fault-block") { trace.add("ran") }
            }
        }
        #expect(queued, "the block is queued; only its mode is missing")
        #expect(seen.map(\.id) == [.systemCallFailed, .modeUnavailable], "\(seen)")
        #expect(!loop.allModes.contains(mode))
        #expect(loop.hasPendingBlocks(for: mode))
        #expect(loop.inventory.pendingBlocks.map(\.modes) == [[mode]])
        // A source's add makes the mode now; its run finds the block by the mode's name.
        let source = LoopSource(label: "fault-block-source") {}
        #expect(loop.add(source, mode: mode) == .added)
        #expect(loop.run(mode: .default, timeout: 0) == .finished, "not a block of the default mode")
        #expect(trace.all.isEmpty)
        loop.run(mode: mode, timeout: 0)
        #expect(trace.all == ["ran"])
        #expect(!loop.hasPendingBlocks(for: mode))
    }

    @Test("a common mode that cannot be created: the common add is refused for it, the default mode still gets the item")
    func commonModeCreationFails() {
        let loop = Loop(clock: VirtualClock())
        let mode = Loop.Mode("fault-common-mode")
        loop.addCommonMode(mode)    // no common items yet: the mode is not created now
        let source = LoopSource(label: "fault-common-source") {}
        var outcome = Loop.AddOutcome.added
        let seen = diagnostics(mentioning: "fault-common") {
            outcome = InjectedFaults.with(Fault(.epollCreate, EMFILE)) { loop.add(source, mode: .common) }
        }
        #expect(outcome == .refused(.systemCall(SystemCallError(call: "epoll_create1", code: EMFILE))))
        #expect(Set(seen.map(\.id)) == [.systemCallFailed, .modeUnavailable, .addRefused], "\(seen)")
        #expect(loop.contains(source, mode: .default))
        #expect(!loop.contains(source, mode: mode))
        // Adding the common item again re-applies it (M3), which creates the mode now.
        #expect(loop.add(source, mode: .common) == .added)
        #expect(loop.contains(source, mode: mode))
    }

    @Test("Loop.make throws .systemCall when its wake-up or async-queue eventfd cannot be made", arguments: [0, 1])
    func loopCreationFails(skip: Int) throws {
        let what = skip == 0 ? "a loop's wake-up descriptor" : "a loop's async-queue descriptor"
        let seen = diagnostics(mentioning: what) {
            InjectedFaults.with(Fault(.eventfd, EMFILE, after: skip)) { () -> Void in
                _ = #expect(throws: LoopError.systemCall(SystemCallError(call: "eventfd", code: EMFILE))) {
                    _ = try Loop.make(clock: VirtualClock())
                }
            }
        }
        #expect(seen.map(\Diagnostic.id) == [DiagnosticID.systemCallFailed], "\(seen)")
        let loop = try Loop.make(clock: VirtualClock())
        #expect(loop.allModes == [.default])
    }

    @Test("write EBADF on the loop's wake-up: reported, and the next wait returns at once instead of sleeping")
    func wakeUpWriteFails() throws {
        let (woke, seen) = try runWakingAtBeforeWaiting("fault-wake-write") { loop in
            // From another thread: on the loop's own thread a wake-up is noted, not written.
            let waker = BackgroundThread { InjectedFaults.with(Fault(.write, EBADF)) { loop.wakeUp() } }
            waker.join()
        }
        #expect(seen.map(\Diagnostic.id) == [DiagnosticID.systemCallFailed], "\(seen)")
        #expect(woke.first == "woke at 0 s", "the wake-up was lost: the wait slept to the run's timeout (\(woke))")
    }

    @Test("a wake-up on the loop's own thread writes nothing, and the next wait still returns at once")
    func ownerThreadWakeUpIsNotWritten() throws {
        let writesInjected = Trace()
        // A failing write planned on this thread: a written wake-up would consume and report it.
        // The diagnostics are not looked at: they are process-wide, and the test above reports
        // the same message while it runs in parallel. The plan left unconsumed is the proof.
        let (woke, _) = try runWakingAtBeforeWaiting("owner-wake") { loop in
            InjectedFaults.with(Fault(.write, EBADF)) {
                loop.wakeUp()
                writesInjected.add("\(InjectedFaults.injected(.write))")
            }
        }
        #expect(writesInjected.all == ["0"], "the owner thread's wake-up wrote the eventfd")
        #expect(woke.first == "woke at 0 s", "the noted wake-up was lost: the wait slept to \(woke)")
    }

    @Test("a wake-up from another thread ends the wait without a read of the wake-up descriptor (edge-triggered)")
    func crossThreadWakeUpIsNotRead() throws {
        let readsInjected = Trace()
        // A failing read planned on the loop's thread for the whole run: a drain of the
        // wake-up eventfd would consume it. The plan left unconsumed is the proof.
        try InjectedFaults.with(Fault(.read, EBADF)) {
            let (woke, _) = try runWakingAtBeforeWaiting("cross-thread-wake") { loop in
                let waker = BackgroundThread { loop.wakeUp() }   // written, not noted: another thread
                waker.join()
            }
            readsInjected.add("\(InjectedFaults.injected(.read))")
            #expect(woke.first == "woke at 0 s", "the written wake-up was lost: the wait slept to \(woke)")
        }
        #expect(readsInjected.all == ["0"], "the loop read its wake-up descriptor")
    }

    /// Runs a virtual-clock loop's mode `name` for 10 s, with a timer 100 s away (so its first
    /// wait would sleep to the run's timeout) and `wake` called in its first BeforeWaiting.
    /// Returns when each wait ended, and the diagnostics that mention waking the loop.
    private func runWakingAtBeforeWaiting(_ name: String, wake: @escaping @Sendable (Loop) -> Void)
        throws -> (woke: [String], seen: [Diagnostic]) {
        let clock = VirtualClock()
        let loop = Loop(clock: clock)
        let mode = Loop.Mode(name)
        let timer = try LoopTimer(after: .seconds(100), clock: clock, label: "\(name)-timer") { _ in }
        defer { timer.invalidate() }
        loop.add(timer, mode: mode)
        let woke = Trace()
        loop.add(LoopObserver(activities: .beforeWaiting, repeats: false, label: "\(name)-before") { _, _ in wake(loop) },
                 mode: mode)
        loop.add(LoopObserver(activities: .afterWaiting, label: "\(name)-after") { _, _ in
            woke.add("woke at \(clock.now.nanoseconds / 1_000_000_000) s")
        }, mode: mode)
        let seen = diagnostics(mentioning: "waking the loop") {
            loop.run(mode: mode, timeout: .seconds(10))
        }
        return (woke.all, seen)
    }

    @Test("a wake-up noted for a run that ended without waiting does not end the next run's wait")
    func staleNotedWakeUpIsDropped() throws {
        let (loop, clock) = virtualLoop()
        let mode = Loop.Mode("stale-owner-wake")
        let timer = try LoopTimer(after: .seconds(5), clock: clock, label: "stale-owner-wake-timer") { _ in loop.stop() }
        loop.add(timer, mode: mode)
        var firstRun = true
        let entry = LoopObserver(activities: .entry, label: "stale-owner-wake-entry") { _, _ in
            guard firstRun else { return }
            firstRun = false
            loop.wakeUp()   // noted for this run, which stops before its first wait (L0)
            loop.stop()
        }
        let woke = Trace()
        let after = LoopObserver(activities: .afterWaiting, label: "stale-owner-wake-after") { _, _ in
            woke.add("woke at \(clock.now.nanoseconds / 1_000_000_000) s")
        }
        loop.add(entry, mode: mode)
        loop.add(after, mode: mode)
        #expect(loop.run(mode: mode, timeout: .seconds(10)) == .stopped)
        #expect(woke.all.isEmpty)
        #expect(loop.run(mode: mode, timeout: .seconds(10)) == .stopped)
        #expect(woke.all == ["woke at 5 s"], "the first run's wake-up ended the second run's wait: \(woke.all)")
        timer.invalidate()
    }
}
