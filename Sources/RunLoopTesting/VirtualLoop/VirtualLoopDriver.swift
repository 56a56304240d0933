import Dispatch
import PThreads
import RunLoopKit
import Synchronization

/// Runs a virtual-loop test's loop on the test's own thread, outside any job: it settles the
/// loop (runs it until nothing is due now), and performs what the test body asks for
/// (`advance`, `runUntilIdle`) while the body is suspended. Since it is the only thing that runs
/// the loop and the loop runs one callout at a time, at most one job of the test runs at once.
final class VirtualLoopDriver: Sendable {
    let loop: Loop
    let clock: VirtualClock
    let monitor: VirtualLoopMonitor
    let maxPassesPerSettle: Int
    let offLoopTimeout: Duration
    let createdAt: LoopTestSourceLocation
    /// The mode the driver waits in when the body waits for work off the loop: no timers (so
    /// the virtual clock stays where it is), no jobs (they run in the common modes); a wake-up
    /// ends its wait.
    static let offLoopWaitMode = Loop.Mode("RunLoopTesting.waitForWorkOffTheLoop")

    private let state: LoopBound<State>
    private let failureList = Locked<[LoopTestFailure]>([])
    private let ownItems: OwnItems

    /// What only the loop's thread touches.
    private struct State {
        var requests: [Request] = []
        var bodyFinished = false
        var cancelBody: (@Sendable () -> Void)?
        /// Set while a settling run is under way (see `settleGuard`).
        var settling: Settling?
    }

    /// A settling run: it ends at the first BeforeWaiting with no job or block queued, at the
    /// first one after `passLimit`, or (when `untilRequest`) once the body has asked for something.
    private struct Settling {
        let passLimit: UInt64
        let untilRequest: Bool
    }

    /// What the body asked for, with the continuation that resumes it once done.
    enum Request {
        case advance(to: UInt64, caller: String, LoopTestSourceLocation, CheckedContinuation<Void, Never>)
        case runUntilIdle(maxPasses: Int, LoopTestSourceLocation, CheckedContinuation<Bool, Never>)
    }

    /// The driver's own items on the loop (not reported as left behind).
    private struct OwnItems: Sendable {
        let keepAlive: LoopSource
        let waitKeepAlive: LoopSource
        let wakeObserver: LoopObserver
        let settleGuard: LoopObserver
    }

    /// Sets up `loop` (made on the calling thread, which must be the one that will drive it).
    init(loop: Loop, clock: VirtualClock, maxPassesPerSettle: Int, offLoopTimeout: Duration,
         createdAt: LoopTestSourceLocation) {
        self.loop = loop
        self.clock = clock
        self.maxPassesPerSettle = max(1, maxPassesPerSettle)
        self.offLoopTimeout = offLoopTimeout
        self.createdAt = createdAt
        monitor = VirtualLoopMonitor(loop: loop, offLoopTimeout: offLoopTimeout)
        state = LoopBound(State(), loop: loop)
        // A source0 never signalled keeps the common modes from being empty (R3: a run of an
        // empty mode returns at once), as a main loop's never are.
        let keepAlive = LoopSource(label: "VirtualLoopTest.keepAlive") {}
        loop.add(keepAlive, mode: .common)
        let waitKeepAlive = LoopSource(label: "VirtualLoopTest.keepAlive") {}
        loop.add(waitKeepAlive, mode: Self.offLoopWaitMode)
        // The off-loop wait ends at its first wake-up, or before it begins when work is due
        // already: a job another thread queued before this run began woke nothing (W3: a
        // wake-up is ignored while the loop is not running), and jobs do not run in this mode.
        // Whatever came in runs at the next settle.
        let wakeObserver = LoopObserver(activities: [.beforeWaiting, .afterWaiting], label: "VirtualLoopTest.endWait",
                                        onOwnerThreadOf: loop) { [unowned loop] _, activity in
            if activity == .afterWaiting || Self.hasWorkNow(on: loop, clock: clock) { loop.stop() }
        }
        loop.add(wakeObserver, mode: Self.offLoopWaitMode)
        // Ends a settling run where the loop would wait with nothing queued: the stop's wake-up
        // ends that wait at once, so the clock does not move. A job queued meanwhile (by this
        // thread or another) also ends the wait at once, so the run goes on to run it.
        let state = self.state
        let settleGuard = LoopObserver(activities: .beforeWaiting, order: Int.max, label: "VirtualLoopTest.settle",
                                       onOwnerThreadOf: loop) { [unowned loop] _, _ in
            guard let settling = state.value.settling else { return }
            if loop.passCount >= settling.passLimit || (settling.untilRequest && !state.value.requests.isEmpty)
                || !loop.hasPendingBlocks(for: .default) {
                loop.stop()
            }
        }
        loop.add(settleGuard, mode: .common)
        ownItems = OwnItems(keepAlive: keepAlive, waitKeepAlive: waitKeepAlive, wakeObserver: wakeObserver,
                            settleGuard: settleGuard)
        loop.eventSink = VirtualLoopSink(monitor: monitor)
    }

    // MARK: Requests from the body (on the loop's thread, in a job)

    func request(_ request: Request) {
        state.value.requests.append(request)
    }

    /// The body's task ended (on the loop's thread).
    func bodyFinished() { state.value.bodyFinished = true }

    /// How to cancel the body's task when it cannot go on.
    func setCancelBody(_ cancel: @escaping @Sendable () -> Void) { state.value.cancelBody = cancel }

    /// Every failure reported so far, oldest first.
    var failures: [LoopTestFailure] { failureList.withLock { $0 } }

    func report(_ message: String, at location: LoopTestSourceLocation) {
        failureList.withLock { $0.append(LoopTestFailure(message, at: location)) }
    }

    // MARK: Driving

    /// Drives the loop until the body has finished, or until it is stuck (reported; its task is
    /// cancelled once, then given up). Returns whether the body finished.
    func drive() -> Bool {
        monitor.startWatchingInputs()
        var cancelled = false
        while true {
            settle(maxPasses: maxPassesPerSettle, caller: "the test", at: createdAt, untilRequest: true)
            if state.value.bodyFinished && state.value.requests.isEmpty { return true }
            if !state.value.requests.isEmpty {
                perform(state.value.requests.removeFirst())
                continue
            }
            if waitForWorkOffTheLoop() { continue }
            if cancelled { return false }
            report(stuckMessage(), at: createdAt)
            cancelled = true
            state.value.cancelBody?()
        }
    }

    private func perform(_ request: Request) {
        switch request {
        case .advance(let target, let caller, let location, let continuation):
            advance(to: target, caller: caller, at: location)
            continuation.resume()
        case .runUntilIdle(let maxPasses, let location, let continuation):
            continuation.resume(returning: settle(maxPasses: maxPasses, caller: "runUntilIdle()", at: location))
        }
    }

    /// Settles the loop, then moves the clock to `target` one event at a time: at each instant
    /// the loop's due timers fire (one pass, T4: every overdue timer in fire-date order), then
    /// the due sleepers resume one by one in deadline order (ties in the order they began to
    /// sleep), the loop settling after each. A sleep begun meanwhile with a deadline before
    /// `target` is one more event.
    private func advance(to target: UInt64, caller: String, at location: LoopTestSourceLocation) {
        guard target >= clock.now.nanoseconds else {
            report("\(caller): the clock reads \(clock.now) and cannot go back to \(LoopInstant(nanoseconds: target)); "
                   + "nothing ran", at: location)
            return
        }
        // What is queued now runs first: a task made just before the advance begins its sleep at
        // the instant it was made, not at the end of the window.
        guard settle(maxPasses: maxPassesPerSettle, caller: caller, at: location) else { return }
        while true {
            let next = min(clock.nextSleeperDeadline ?? .max, loop.timerWakeDeadline(in: .default) ?? .max)
            guard next <= target else { break }
            clock.move(toNanoseconds: next)
            if !loopHasWorkNow(), let resumed = clock.resumeFirstSleeper(dueBy: clock.now.nanoseconds),
               resumed.thread != currentThreadNumber() {
                monitor.noteSleeperOffLoop()
            }
            guard settle(maxPasses: maxPassesPerSettle, caller: caller, at: location) else { return }
        }
        clock.move(toNanoseconds: target)
        settle(maxPasses: maxPassesPerSettle, caller: caller, at: location)
    }

    /// Runs the default mode while anything is due now (a job or block, a due timer, a
    /// signalled source0, a port message, a ready fd, queued work): each run goes on until the
    /// settle guard ends it at a BeforeWaiting with nothing queued. Then, if the test uses the
    /// main actor, a main-queue barrier, and again. Reports and returns false when `maxPasses`
    /// passes do not settle it. `untilRequest`: stops early (settled) once the body asks for
    /// something, which then settles the loop with its own bound.
    @discardableResult
    private func settle(maxPasses: Int, caller: String, at location: LoopTestSourceLocation,
                        untilRequest: Bool = false) -> Bool {
        var passes: UInt64 = 0
        while true {
            while loopHasWorkNow() {
                if untilRequest && !state.value.requests.isEmpty { return true }
                guard passes < UInt64(maxPasses) else {
                    report(notSettledMessage(caller, passes: Int(passes)), at: location)
                    return false
                }
                let start = loop.passCount
                state.value.settling = Settling(passLimit: start + UInt64(maxPasses) - passes, untilRequest: untilRequest)
                // No timeout (beyond CF's interval limit): the guard ends the run before any wait
                // could jump the clock.
                _ = loop.run(mode: .default, timeout: .seconds(Int64(1) << 40))
                state.value.settling = nil
                passes += loop.passCount - start
            }
            guard monitor.usesMainActor else { return true }
            monitor.mainQueueBarrier()
            if !loopHasWorkNow() { return true }
        }
    }

    private func loopHasWorkNow() -> Bool { Self.hasWorkNow(on: loop, clock: clock) }

    /// Whether a pass of the default mode has something to do now.
    private static func hasWorkNow(on loop: Loop, clock: VirtualClock) -> Bool {
        if loop.hasPendingBlocks(for: .default) { return true }
        // The mode's own deadline (T8 may group timers under it), which the pass fires at.
        if let wake = loop.timerWakeDeadline(in: .default), wake <= clock.now.nanoseconds { return true }
        return !DueWork.list(on: loop, clock: clock, in: .default).isEmpty
    }

    /// The body waits for something that is not on the loop: waits, in real time, up to
    /// `offLoopTimeout` for the first input from another thread. Returns whether one came.
    private func waitForWorkOffTheLoop() -> Bool {
        if monitor.usesMainActor {
            monitor.mainQueueBarrier()
            if loopHasWorkNow() { return true }
        }
        let timedOut = Atomic<Bool>(false)
        let limit = DispatchWorkItem { [monitor, loop] in
            timedOut.store(true, ordering: .releasing)
            monitor.ownWake { loop.stop() }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(Nanoseconds.from(offLoopTimeout))),
                                          execute: limit)
        // A timeout beyond CF's interval limit is no timeout: the virtual clock does not jump.
        _ = loop.run(mode: Self.offLoopWaitMode, timeout: .seconds(Int64(1) << 40))
        limit.cancel()
        return !timedOut.load(ordering: .acquiring) || loopHasWorkNow()
    }

    // MARK: The end of the test

    /// After the body: reports what the test left (tasks still asleep on the clock, which are
    /// then resumed with `CancellationError` so their tasks end on the loop; items still on the
    /// loop) and what left the loop, then tears the loop down.
    func finish() {
        let asleep = clock.cancelSleepers()
        if !asleep.isEmpty {
            report("Tasks still sleep on the virtual clock: \(asleep.count) when the test ended\n"
                   + asleep.map { "  - until \(LoopInstant(nanoseconds: $0.deadline)) (since \(LoopInstant(nanoseconds: $0.since)))" }
                       .joined(separator: "\n")
                   + "\nThey were resumed with CancellationError. Advance the clock past their deadlines, or cancel their tasks.",
                   at: createdAt)
            settle(maxPasses: maxPassesPerSettle, caller: "the end of the test", at: createdAt)
        }
        let items = itemsLeft()
        if !items.isEmpty {
            report("Items are still on the test's loop: \(items.count) when the test ended\n"
                   + items.map { "  - " + $0 }.joined(separator: "\n"), at: createdAt)
        }
        monitor.stopWatching()
        let places = StartingPlaces()
        let sleeps = monitor.realClockSleeps
        if sleeps.count > 0 {
            report(realClockSleepMessage(sleeps, finding: places), at: createdAt)
        }
        let inputs = monitor.offLoopInputs
        if !inputs.isEmpty {
            report("Work left the test's loop: \(inputs.count) piece\(inputs.count == 1 ? "" : "s"), not run in step with it\n"
                   + inputs.map { "  - " + $0.describe(finding: places) }.joined(separator: "\n"), at: createdAt)
        }
        if monitor.mainQueueTimeouts > 0 {
            report("The main queue did not run within \(offLoopTimeout) (\(monitor.mainQueueTimeouts) time(s)): the test "
                   + "used the main actor, whose work the loop waits for; is the main thread blocked?", at: createdAt)
        }
        loop.eventSink = nil
        loop.tearDown()
    }

    /// Items the test added and did not remove, one line each.
    private func itemsLeft() -> [String] {
        let own: Set<ObjectIdentifier> = [ObjectIdentifier(ownItems.keepAlive), ObjectIdentifier(ownItems.waitKeepAlive),
                                          ObjectIdentifier(ownItems.wakeObserver), ObjectIdentifier(ownItems.settleGuard)]
        var lines: [String] = []
        for items in loop.inventory.modes where items.mode != Self.offLoopWaitMode {
            lines += items.timers.filter { !own.contains(ObjectIdentifier($0)) }.map {
                "timer '\($0.label)' (next fire at \($0.nextFireDate)) is still in \(items.mode)"
            }
            lines += items.sources0.filter { !own.contains(ObjectIdentifier($0)) }.map {
                "source0 '\($0.label)' is still in \(items.mode)"
            }
            lines += items.ports.map { "port '\($0.label)' is still in \(items.mode)" }
            lines += items.fileSources.map { "fd source '\($0.label)' is still in \(items.mode)" }
            lines += items.observers.filter { !own.contains(ObjectIdentifier($0)) }.map {
                "observer '\($0.label)' is still in \(items.mode)"
            }
        }
        return lines
    }

    // MARK: Messages

    private func notSettledMessage(_ caller: String, passes: Int) -> String {
        let due = DueWork.list(on: loop, clock: clock, in: .default)
        let jobs = loop.hasPendingBlocks(for: .default) ? ["jobs or blocks are queued"] : []
        return "The loop did not settle: \(caller) ran \(passes) passes and work was still due after each\n"
            + "  Still due: " + (jobs + due).joined(separator: "; ") + "\n"
            + "  A task that never waits for long (for example `while true { await Task.yield() }`) keeps the loop busy; "
            + "raise maxPassesPerSettle if the work is finite."
    }

    private func realClockSleepMessage(_ sleeps: RealClockSleeps, finding places: StartingPlaces) -> String {
        let more = sleeps.notKept > 0 ? ["  - … and \(sleeps.notKept) more"] : []
        return "The test slept on a real clock: \(sleeps.count) sleep\(sleeps.count == 1 ? "" : "s"), which virtual time "
            + "cannot end\n"
            + (sleeps.kept.map { "  - " + $0.describe(finding: places) } + more).joined(separator: "\n") + "\n"
            + "  The test would wait for real time, and what runs meanwhile would depend on timing. Each sleep ended at "
            + "once, as if its time had passed: its task went on behind the jobs already queued on the loop. Sleep on "
            + "the test's virtual clock (`test.clock`) instead."
    }

    private func stuckMessage() -> String {
        var lines = ["The test body is suspended and nothing on the loop can resume it: no input came from another "
                     + "thread within \(offLoopTimeout). Its task was cancelled."]
        let asleep = clock.sleeperInfos
        if !asleep.isEmpty {
            lines.append("  \(asleep.count) task(s) sleep on the virtual clock, first until "
                         + "\(LoopInstant(nanoseconds: asleep[0].deadline)) (the clock reads \(clock.now)): "
                         + "advance the clock to wake them.")
        }
        let inputs = monitor.offLoopInputs.count
        if inputs > 0 { lines.append("  \(inputs) input(s) came from other threads (listed at the end of the test).") }
        return lines.joined(separator: "\n")
    }
}
