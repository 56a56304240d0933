import Testing
import Dispatch
import PThreads
import RunLoopDiagnostics
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// A diagnostics handler runs with no RunLoopKit lock held, so it may call back into the loop or
/// the item whose failure it is told about. One test per kind of place a failure used to be
/// reported under a lock: a mode created in a loop's critical section, a timer descriptor
/// re-armed there (by the loop before its wait, by another thread while it sleeps), an item
/// removed from a wait set, an fd source's interest restored in a mode after a change failed in
/// another, a job's mode created as the job is enqueued, a port's counter drained under the
/// port's lock, the async queue's descriptor put into a wait set as a run starts and put back as
/// a nested run ends, the async queue drained, a thread's loop made by the registry, and a
/// teardown closing the descriptors. Each handler calls back into the
/// same loop or item; before, those calls waited for a lock their own thread held.
///
/// The handler is process-wide, so each test runs in a child process of its own (an exit test)
/// and the tests running in parallel never see it. The child has a deadline (`alarm`): a
/// handler that deadlocks kills it, which fails the test instead of hanging the run. The child
/// checks what its handler saw and did, and says what went wrong on standard error.
@Suite("Diagnostics handler calls back", .needsInjectedFaults)
struct HandlerCallBackTests {
    /// Runs `scenario` in the child and ends it with status 0, each problem it found on standard
    /// error and then `finished`. Status 0 even with problems: an exit test whose status is not
    /// the expected one returns no result, so the problems would never be shown. A child killed
    /// at its deadline never writes `finished`.
    static func child(_ scenario: () throws -> [String]) -> Never {
        alarm(30)   // the child's deadline: SIGALRM ends a child whose handler deadlocked
        let problems: [String]
        do { problems = try scenario() } catch { problems = ["threw \(error)"] }
        for problem in problems { printToStderr(problem) }
        printToStderr("finished")
        exit(0)
    }

    /// Checks the child's result: it ended normally and found nothing wrong.
    static func expectClean(_ result: ExitTest.Result?, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text == "finished\n", "the child reported: \(text)", sourceLocation: sourceLocation)
    }

    /// What a handler saw and what its calls back returned, in order.
    final class Seen: Sendable {
        private let entries = Locked<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }

        /// No problem when the handler saw and did exactly `expected`; else one saying what it did.
        func problems(expecting expected: [String]) -> [String] {
            all == expected ? [] : ["the handler saw \(all), expected \(expected)"]
        }

        /// `problems(expecting:)`, and `problem` too when the scenario's own outcome, `holds`, is false.
        func problems(expecting expected: [String], andRequire holds: Bool, _ problem: @autoclosure () -> String) -> [String] {
            problems(expecting: expected) + (holds ? [] : [problem()])
        }
    }

    /// Installs a handler that records every diagnostic as "id: message" and then, for those
    /// `matching`, runs `callBack`, recording what it returns.
    static func handle(_ seen: Seen, matching: @escaping @Sendable (Diagnostic) -> Bool,
                       callBack: @escaping @Sendable (Diagnostic) -> String) {
        Diagnostics.setHandler { diagnostic in
            seen.add("\(diagnostic.id): \(diagnostic.message)")
            guard matching(diagnostic) else { return }
            seen.add("called back: \(callBack(diagnostic))")
        }
    }

    // MARK: A loop's lock

    @Test("a mode that cannot be created (add, perform, stop(mode:), addCommonMode): the handler adds a timer to the same loop")
    func modeCreation() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let loop = Loop(clock: VirtualClock())
                let timer = try LoopTimer(after: .seconds(1), clock: loop.clock, label: "from-handler") { _ in }
                let seen = Seen()
                HandlerCallBackTests.handle(seen, matching: { $0.id == .modeUnavailable }) { _ in
                    "\(loop.add(timer, mode: .default)) \(loop.contains(timer, mode: .default))"
                }
                let source = LoopSource(label: "source") {}
                InjectedFaults.with(Fault(.epollCreate, EMFILE)) { _ = loop.add(source, mode: "by-add") }
                InjectedFaults.with(Fault(.epollCreate, EMFILE)) { _ = loop.perform(inMode: "by-perform") {} }
                InjectedFaults.with(Fault(.epollCreate, EMFILE)) { loop.stop(mode: "by-stop") }
                loop.add(source, mode: .common)   // a common item: a new common mode is created for it
                InjectedFaults.with(Fault(.epollCreate, EMFILE)) { loop.addCommonMode("by-common") }
                let failure = "epoll_create1 failed: errno \(EMFILE) (Too many open files)"
                var expected: [String] = []
                for (index, mode) in ["by-add", "by-perform", "by-stop", "by-common"].enumerated() {
                    expected += ["loop.system-call-failed: cannot create the wait set of mode '\(mode)': \(failure)",
                                 "loop.mode-unavailable: mode '\(mode)' cannot be created: \(failure); items added to it are refused and runs of it return .finished until it can",
                                 "called back: \(index == 0 ? "added" : "alreadyPresent") true"]
                    if mode == "by-add" {
                        expected.append("loop.add-refused: LoopSource 'source' was not added to mode 'by-add': \(Loop.AddRefusal.systemCall(SystemCallError(call: "epoll_create1", code: EMFILE)))")
                    }
                }
                return seen.problems(expecting: expected)
            }
        })
    }

    @Test("the loop's timer descriptor cannot be armed before its wait: the handler adds a timer to the same loop, which fires")
    func timerArmedBeforeWait() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let loop = Loop(clock: MonotonicClock.shared)
                let mode = Loop.Mode("arm")
                let port = try LoopPortSource(label: "keeps-the-wait-in-the-kernel") { _ in }
                loop.add(port, mode: mode)
                let fired = Seen()
                let late = try LoopTimer(after: .seconds(20), clock: loop.clock, label: "late") { _ in fired.add("late") }
                let soon = try LoopTimer(after: .milliseconds(1), clock: loop.clock, label: "soon") { _ in
                    fired.add("soon")
                    loop.stop()
                }
                loop.add(late, mode: mode)
                let seen = Seen()
                HandlerCallBackTests.handle(seen, matching: { $0.message.hasPrefix("arming the timer descriptor") }) { _ in
                    "\(loop.add(soon, mode: mode))"   // the loop is about to wait: this re-arms its descriptor
                }
                let run = InjectedFaults.with(Fault(.timerfdSettime, EBADF)) { loop.run(mode: mode, timeout: .seconds(10)) }
                loop.tearDown()
                let expected = ["loop.system-call-failed: arming the timer descriptor of mode 'arm': timerfd_settime failed: errno \(EBADF) (Bad file descriptor)",
                                "called back: added"]
                return seen.problems(expecting: expected, andRequire: run == .stopped && fired.all == ["soon"],
                    "the run ended \(run) with \(fired.all) fired")
            }
        })
    }

    @Test("another thread moves a timer while the loop sleeps and arming fails: the handler moves the same timer again")
    func timerMovedWhileSleeping() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let loop = Loop(clock: MonotonicClock.shared)
                let mode = Loop.Mode("moved")
                let fired = Seen()
                let timer = try LoopTimer(after: .seconds(20), clock: loop.clock, label: "moved") { _ in
                    fired.add("fired")
                    loop.stop()
                }
                loop.add(timer, mode: mode)
                let seen = Seen()
                HandlerCallBackTests.handle(seen, matching: { $0.message.hasPrefix("arming the timer descriptor") }) { _ in
                    // The timer's lock and the loop's were held where this failed.
                    timer.setNextFireDate(MonotonicClock.shared.now.advanced(by: .milliseconds(1)))
                    return "moved"
                }
                let mover = BackgroundThread {
                    InjectedFaults.with(Fault(.timerfdSettime, EBADF)) {
                        // A move while the loop waits re-arms its descriptor at once (T6), and
                        // that fails; one that lands between two waits (a debug build's wait
                        // ends every lost-wake-up bound) only marks the deadline stale: move again.
                        let deadline = MonotonicClock.shared.now.advanced(by: .seconds(10))
                        while InjectedFaults.injected(.timerfdSettime) == 0 && MonotonicClock.shared.now < deadline {
                            guard loop.waitUntilWaiting(timeout: .seconds(10)) else { return }
                            timer.setNextFireDate(MonotonicClock.shared.now.advanced(by: .seconds(15)))
                        }
                    }
                }
                let run = loop.run(mode: mode, timeout: .seconds(10))
                mover.join()
                loop.tearDown()
                let expected = ["loop.system-call-failed: arming the timer descriptor of mode 'moved': timerfd_settime failed: errno \(EBADF) (Bad file descriptor)",
                                "called back: moved"]
                return seen.problems(expecting: expected, andRequire: run == .stopped && fired.all == ["fired"],
                    "the run ended \(run) with \(fired.all) fired")
            }
        })
    }

    @Test("a port whose removal from a wait set fails (epoll_ctl DEL): the handler adds the same port to another mode")
    func portRemoval() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let loop = Loop(clock: VirtualClock())
                let port = try LoopPortSource(label: "removed") { _ in }
                loop.add(port, mode: .default)
                let seen = Seen()
                HandlerCallBackTests.handle(seen, matching: { $0.item == "removed" }) { _ in
                    "\(loop.contains(port, mode: .default)) \(loop.add(port, mode: "elsewhere"))"
                }
                let removed = InjectedFaults.with(Fault(.epollRemove, EBADF)) { loop.remove(port, mode: .default) }
                let expected = ["loop.system-call-failed: removing port 'removed' from mode 'kCFRunLoopDefaultMode': epoll_ctl(DEL) failed: errno \(EBADF) (Bad file descriptor)",
                                "called back: false added"]
                let problems = seen.problems(expecting: expected, andRequire: removed && loop.contains(port, mode: "elsewhere"),
                    "removed \(removed), in the other mode \(loop.contains(port, mode: "elsewhere"))")
                port.invalidate()
                return problems
            }
        })
    }

    @Test("an fd source whose descriptor was closed first is invalidated: the handler adds a source to the same loop")
    func closedDescriptorRemoval() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let loop = Loop(clock: VirtualClock())
                let pipe = try FaultTestPipe()
                let file = LoopFileSource(fd: pipe.read, events: .readable, label: "closed-first") { _ in }
                loop.add(file, mode: .default)
                let other = LoopSource(label: "added-by-handler") {}
                let seen = Seen()
                HandlerCallBackTests.handle(seen, matching: { $0.item == "closed-first" }) { _ in
                    "\(loop.add(other, mode: .default)) \(loop.contains(file, mode: .default))"
                }
                pipe.close()        // the kernel drops the descriptor from every epoll set
                file.invalidate()   // the loop's epoll_ctl(DEL) then fails with EBADF
                let expected = ["loop.system-call-failed: removing fd \(pipe.read) from mode 'kCFRunLoopDefaultMode' (closed before its source was removed?): epoll_ctl(DEL) failed: errno \(EBADF) (Bad file descriptor)",
                                "called back: added false"]
                return seen.problems(expecting: expected)
            }
        })
    }

    @Test("the async queue cannot join the wait set as a run starts: the handler performs a block on the same loop, which runs in that run")
    func asyncQueueJoinsWaitSet() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let loop = Loop(clock: VirtualClock())
                let mode = Loop.Mode("async-start")
                loop.addCommonMode(mode)   // a run services the async queue only in a common mode (L1)
                let ran = Seen()
                loop.add(LoopSource(label: "keeps-the-mode") {}, mode: mode)
                let seen = Seen()
                HandlerCallBackTests.handle(seen, matching: { $0.message.hasPrefix("adding the async queue") }) { _ in
                    "\(loop.perform(inMode: mode) { ran.add("block from the handler") })"
                }
                let run = InjectedFaults.with(Fault(.epollAdd, EBADF)) { loop.run(mode: mode, timeout: .zero) }
                let expected = ["loop.system-call-failed: adding the async queue to mode 'async-start'; the next run tries again: epoll_ctl(ADD) failed: errno \(EBADF) (Bad file descriptor)",
                                "called back: true"]
                loop.tearDown()
                return seen.problems(expecting: expected, andRequire: ran.all == ["block from the handler"],
                    "the run (\(run)) ran \(ran.all)")
            }
        })
    }

    @Test("the async queue's descriptor cannot be drained: the handler submits more work to the same loop, which runs")
    func asyncQueueDrain() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let loop = Loop(clock: VirtualClock())
                let ran = Seen()
                loop.add(LoopSource(label: "keeps-the-mode") {}, mode: .default)
                let seen = Seen()
                HandlerCallBackTests.handle(seen, matching: { $0.message.hasPrefix("draining the async queue") }) { _ in
                    "\(loop.submit(label: "second") { ran.add("second"); loop.stop() })"
                }
                loop.submit(label: "first") { ran.add("first") }
                let run = InjectedFaults.with(Fault(.read, EBADF)) { loop.run(mode: .default, timeout: .seconds(10)) }
                let expected = ["loop.system-call-failed: draining the async queue's descriptor: read(eventfd) failed: errno \(EBADF) (Bad file descriptor)",
                                "called back: true"]
                loop.tearDown()
                return seen.problems(expecting: expected, andRequire: run == .stopped && ran.all == ["first", "second"],
                    "the run ended \(run) and ran \(ran.all)")
            }
        })
    }

    @Test("an fd source's interest change fails in its second mode and the first cannot be restored: the handler changes the same source's interest again")
    func interestRestore() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let loop = Loop(clock: VirtualClock())
                let pipe = try FaultTestPipe()
                let file = LoopFileSource(fd: pipe.read, events: .readable, label: "interest") { _ in }
                loop.add(file, mode: "first")
                loop.add(file, mode: "second")
                let seen = Seen()
                HandlerCallBackTests.handle(seen, matching: { $0.item == "interest" }) { _ in
                    // The loop's lock was held where the restore failed.
                    do { try file.setInterest(.readable) } catch { return "\(error)" }
                    return "restored \(file.interest == .readable)"
                }
                // The first mode's MOD goes through, the second's fails, then the restore of the first.
                let thrown = InjectedFaults.with(Fault(.epollModify, EBADF, after: 1, times: 2)) { () -> String in
                    do { try file.setInterest([]) } catch { return "\(error)" }
                    return "nothing thrown"
                }
                let failure = "epoll_ctl(MOD) failed: errno \(EBADF) (Bad file descriptor)"
                let expected = ["loop.system-call-failed: restoring the interest of 'interest' in mode 'first': \(failure)",
                                "called back: restored true"]
                let problems = seen.problems(expecting: expected, andRequire: thrown == failure,
                    "setInterest threw \(thrown)")
                file.invalidate()
                pipe.close()
                return problems
            }
        })
    }

    @Test("a job enqueued while its jobModes' mode cannot be created: the handler adds a source to that mode, whose run then runs the job")
    func jobModeCreation() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let loop = Loop(clock: VirtualClock())
                let mode = Loop.Mode("jobs")
                loop.jobModes = [mode]
                let ran = Seen()
                let seen = Seen()
                HandlerCallBackTests.handle(seen, matching: { $0.id == .modeUnavailable }) { _ in
                    "\(loop.add(LoopSource(label: "keeps-the-mode") {}, mode: mode)) \(loop.jobModes == [mode])"
                }
                // The task's first job is enqueued on this thread, as the task is created.
                _ = InjectedFaults.with(Fault(.epollCreate, EMFILE)) { Task(executorPreference: loop) { ran.add("job") } }
                let run = loop.run(mode: mode, timeout: .zero)
                let failure = "epoll_create1 failed: errno \(EMFILE) (Too many open files)"
                let expected = ["loop.system-call-failed: cannot create the wait set of mode 'jobs': \(failure)",
                                "loop.mode-unavailable: mode 'jobs' cannot be created: \(failure); items added to it are refused and runs of it return .finished until it can",
                                "called back: added true"]
                loop.tearDown()
                return seen.problems(expecting: expected, andRequire: ran.all == ["job"],
                    "the run (\(run)) ran \(ran.all)")
            }
        })
    }

    @Test("a run nested in the async queue's drain cannot put the queue's descriptor back into its wait set as it ends: the handler submits work to the same loop, which runs")
    func asyncQueueRestoredAfterNestedRun() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let loop = Loop(clock: VirtualClock())
                let ran = Seen()
                loop.add(LoopSource(label: "keeps-the-mode") {}, mode: .default)
                let seen = Seen()
                HandlerCallBackTests.handle(seen, matching: { $0.message.hasPrefix("putting the async queue back") }) { _ in
                    "\(loop.submit(label: "second") { ran.add("second") })"
                }
                loop.submit(label: "first") {
                    ran.add("first")
                    // A run nested in the drain must not service the queue (L1): its descriptor
                    // leaves the mode's set for the nested run, and joining it again fails.
                    _ = InjectedFaults.with(Fault(.epollAdd, EBADF)) { loop.run(mode: .default, timeout: .zero) }
                }
                let first = loop.run(mode: .default, timeout: .zero)
                let second = loop.run(mode: .default, timeout: .zero)   // joins the set again and runs "second"
                let expected = ["loop.system-call-failed: putting the async queue back into mode 'kCFRunLoopDefaultMode'; the next run tries again: epoll_ctl(ADD) failed: errno \(EBADF) (Bad file descriptor)",
                                "called back: true"]
                loop.tearDown()
                return seen.problems(expecting: expected, andRequire: ran.all == ["first", "second"],
                    "the runs (\(first), \(second)) ran \(ran.all)")
            }
        })
    }

    @Test("a teardown whose closes fail: the handler calls the torn-down loop; past 16 failures one loop.diagnostics-dropped says how many more")
    func teardownCloses() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let loop = Loop(clock: VirtualClock())
                for index in 0..<20 { loop.add(LoopSource(label: "s\(index)") {}, mode: Loop.Mode("mode-\(index)")) }
                let timer = try LoopTimer(after: .seconds(1), clock: loop.clock, label: "after-teardown") { _ in }
                let seen = Seen()
                HandlerCallBackTests.handle(seen, matching: { $0.id == .diagnosticsDropped }) { _ in
                    "\(loop.add(timer, mode: .default)) \(loop.allModes.count)"
                }
                // 21 modes with two descriptors each, the wake-up and async-queue descriptors.
                InjectedFaults.with(Fault(.close, EIO, times: 1_000)) { loop.tearDown() }
                let closes = seen.all.filter { $0.hasPrefix("loop.system-call-failed: closing") }
                let rest = seen.all.filter { !$0.hasPrefix("loop.system-call-failed: closing") }
                let expected = ["loop.diagnostics-dropped: 28 more diagnostics raised under a loop's lock in one critical section were dropped (the first 16 were reported)",
                                "loop.add-refused: LoopTimer 'after-teardown' was not added to mode 'kCFRunLoopDefaultMode': \(Loop.AddRefusal.loopTornDown)",
                                "called back: \(Loop.AddOutcome.refused(.loopTornDown)) 21"]
                var problems: [String] = []
                if closes.count != 16 { problems.append("\(closes.count) close failures reported, expected the first 16") }
                if rest != expected { problems.append("the handler saw \(rest), expected \(expected)") }
                return problems
            }
        })
    }

    @Test("Loop.main's main-queue watch cannot be set up on its first run (io_uring_setup): the handler performs a block on Loop.main, which runs in that run")
    func mainQueueWatchSetup() throws {
        // Loop.main runs on the main thread, which the test runner's process keeps: the probe runs
        // on a fresh process's main thread, before main() (see `runMainThreadProbe`).
        let status = try runMainThreadProbe(environment: ["RLK_MAIN_THREAD_PROBE_HANDLER=1"])
        #expect(status == 0, "the probe's raw wait status \(status); its problems are on standard error")
    }

    /// `mainQueueWatchSetup`'s child, on its main thread before main(): writes each problem to
    /// standard error (nothing when it found none) and exits, 0 when it found none.
    static func mainQueueWatchProbe() -> Never {
        alarm(30)   // the child's deadline: SIGALRM ends a child whose handler deadlocked
        let loop = Loop.main
        let ran = Seen()
        let seen = Seen()
        handle(seen, matching: { $0.id == .mainQueuePolled }) { _ in
            "\(loop.perform(inMode: .default) { ran.add("block from the handler") })"
        }
        DispatchQueue.main.async {
            ran.add("main queue")
            loop.stop()
        }
        let run = InjectedFaults.with(Fault(.ringSetup, ENOSYS)) { loop.run(mode: .default, timeout: .seconds(10)) }
        let expected = ["loop.main-queue-polled: io_uring_setup failed: errno \(ENOSYS) (Function not implemented): Loop.main checks the main dispatch queue with a system call on each polling pass",
                        "called back: true"]
        var problems = seen.problems(expecting: expected)
        if run != .stopped || ran.all != ["block from the handler", "main queue"] { problems.append("the run ended \(run) and ran \(ran.all)") }
        if loop.watchesMainQueueWithoutSystemCalls { problems.append("Loop.main watches the main queue although its watch could not be set up") }
        for problem in problems { printToStderr(problem) }
        exit(problems.isEmpty ? 0 : 1)
    }

    // MARK: An item's lock

    @Test("a port's counter cannot be drained as a message is taken or as it is invalidated: the handler sends to the same port")
    func portDrain() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let loop = Loop(clock: VirtualClock())
                let received = Seen()
                let port = try LoopPortSource(label: "drained") { message in
                    if case .bytes(let bytes) = message { received.add(String(decoding: bytes, as: UTF8.self)) }
                }
                loop.add(port, mode: .default)
                let seen = Seen()
                HandlerCallBackTests.handle(seen, matching: { $0.message.hasPrefix("draining port") }) { _ in
                    // The port's lock was held where this failed.
                    let sent: Bool
                    do { try port.send(Array("from-handler".utf8)); sent = true } catch { sent = false }
                    return "sent \(sent), \(port.pendingCount) pending"
                }
                try port.send(Array("first".utf8))
                InjectedFaults.with(Fault(.read, EBADF)) {
                    _ = loop.run(mode: .default, timeout: .seconds(1), returnAfterSourceHandled: true)
                }
                _ = loop.run(mode: .default, timeout: .seconds(1), returnAfterSourceHandled: true)
                InjectedFaults.with(Fault(.read, EBADF)) { port.invalidate() }
                let failure = "draining port 'drained': read(eventfd) failed: errno \(EBADF) (Bad file descriptor)"
                let expected = ["loop.system-call-failed: \(failure)", "called back: sent true, 1 pending",
                                "loop.system-call-failed: \(failure)", "called back: sent false, 0 pending"]
                return seen.problems(expecting: expected, andRequire: received.all == ["first", "from-handler"],
                    "the port delivered \(received.all)")
            }
        })
    }

    // MARK: The registry's lock

    @Test("a thread's loop made with its default mode failing: the handler asks for the thread's loop, and gets the one the thread keeps")
    func threadLoopCreation() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let seen = Seen()
                let fromHandler = Locked<Loop?>(nil)
                HandlerCallBackTests.handle(seen, matching: { $0.id == .modeUnavailable }) { _ in
                    let loop = Loop.current   // the registry's lock was held where this failed
                    fromHandler.withLock { $0 = loop }
                    return "\(loop.allModes.count) modes"
                }
                let kept = Locked<Bool>(false)
                let thread = BackgroundThread {
                    let loop = InjectedFaults.with(Fault(.epollCreate, EMFILE)) { Loop.current }
                    let same = loop === Loop.current && fromHandler.withLock { $0 } === loop
                    kept.withLock { $0 = same }
                }
                thread.join()
                let failure = "epoll_create1 failed: errno \(EMFILE) (Too many open files)"
                let expected = ["loop.system-call-failed: cannot create the wait set of mode 'kCFRunLoopDefaultMode': \(failure)",
                                "loop.mode-unavailable: mode 'kCFRunLoopDefaultMode' cannot be created: \(failure); items added to it are refused and runs of it return .finished until it can",
                                "called back: 0 modes"]
                return seen.problems(expecting: expected, andRequire: kept.withLock({ $0 }),
                    "the thread's loop is not the one the handler got")
            }
        })
    }

    @Test("a thread's loop made while every wait set and timer descriptor fails: the handler asks for the thread's loop at each report, gets the one the thread keeps, and nothing reports again")
    func threadLoopCreationOutOfDescriptors() async {
        Self.expectClean(await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            HandlerCallBackTests.child {
                let seen = Seen()
                let fromHandler = Locked<[Loop]>([])
                HandlerCallBackTests.handle(seen, matching: { _ in true }) { _ in
                    let loop = Loop.current   // before the fix: nothing registered yet, so another loop, which failed too
                    fromHandler.withLock { $0.append(loop) }
                    return "\(loop.allModes.count) modes"
                }
                let kept = Locked<Bool>(false)
                let thread = BackgroundThread {
                    // Out of descriptors for the whole creation, except the loop's own two
                    // eventfds (without them no loop exists: see the test below).
                    let loop = InjectedFaults.with(Fault(.epollCreate, EMFILE, times: 1_000_000),
                                                   Fault(.timerfdCreate, EMFILE, times: 1_000_000),
                                                   Fault(.eventfd, EMFILE, after: 2, times: 1_000_000)) { Loop.current }
                    let same = loop === Loop.current && fromHandler.withLock { $0.allSatisfy { $0 === loop } }
                    kept.withLock { $0 = same }
                }
                thread.join()
                let failure = "epoll_create1 failed: errno \(EMFILE) (Too many open files)"
                let expected = ["loop.system-call-failed: cannot create the wait set of mode 'kCFRunLoopDefaultMode': \(failure)",
                                "called back: 0 modes",
                                "loop.mode-unavailable: mode 'kCFRunLoopDefaultMode' cannot be created: \(failure); items added to it are refused and runs of it return .finished until it can",
                                "called back: 0 modes"]
                return seen.problems(expecting: expected, andRequire: kept.withLock({ $0 }),
                    "the thread's loop is not the one the handler got (\(fromHandler.withLock { $0.count }) calls back)")
            }
        })
    }

    @Test("a thread's loop that cannot be made at all (every eventfd fails): its failure is reported once, and a handler asking for the loop stops the process instead of failing again")
    func threadLoopCannotBeMade() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            alarm(30)   // the child's deadline, as in `child`
            Diagnostics.setHandler { diagnostic in
                printToStderr("\(diagnostic.id): \(diagnostic.message)")
                _ = Loop.current   // before the fix: another loop, which failed and reported again, without end
            }
            let thread = BackgroundThread {
                _ = InjectedFaults.with(Fault(.eventfd, EMFILE, times: 1_000_000)) { Loop.current }
            }
            thread.join()
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let failure = "eventfd failed: errno \(EMFILE) (Too many open files)"
        let reports = text.split(separator: "\n").filter { $0.hasPrefix("loop.") }
        #expect(reports == ["loop.system-call-failed: cannot create a loop's wake-up descriptor: \(failure)"], "\(text)")
        #expect(text.contains("RunLoopKit: cannot create a loop's descriptors: \(failure)"), "\(text)")
    }

    // MARK: The debug checks

    #if DEBUG
    @Test("debug builds stop a report made while the thread holds a RunLoopKit lock (a loop's, an item's, any other)",
          arguments: ["loop", "item", "locked"])
    func reportUnderALockStops(lock: String) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [lock] in
            let diagnostic = Diagnostic(severity: .warning, id: "test.under-lock", message: "reported under a lock")
            let loop = Loop(clock: VirtualClock())
            switch lock {
            case "loop": loop.lock.withLock { _ in Diagnostics.report(diagnostic) }
            case "item": ItemLock(itemID: 16).withLock { Diagnostics.report(diagnostic) }
            default: Locked(0).withLock { _ in Diagnostics.report(diagnostic) }
            }
            withExtendedLifetime(loop) {}
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Diagnostics.report called while this thread holds 1 RunLoopKit lock(s)"), "\(text)")
    }

    @Test("debug builds stop a loop's lock released with unlock() while a diagnostic deferred under it waits")
    func unlockWithDeferredReportStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = Loop(clock: VirtualClock())
            let held = loop.lock.lock()
            held.deferReport(.warning, "test.deferred", "deferred under the lock")
            held.unlock()
            withExtendedLifetime(loop) {}
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("released with unlock() while diagnostics raised under it wait to be reported"), "\(text)")
    }
    #endif
}
