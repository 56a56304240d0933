import CRunLoopShims
import RunLoopDiagnostics
import LoopTime

// A loop driven by another event loop (the host: GLib, libuv, Qt, ...): the run's passes are
// cut where the host sleeps. Rules H1–H4 in Docs/Rules.md.
//
//   host iteration                   the loop (one pass)
//   ------------------------------   ----------------------------------------------------
//   prepare (before the host polls)  HostedRun.prepare(): BeforeTimers, BeforeSources, blocks,
//                                    sources0, blocks; how long the host may sleep for it
//   poll, when it blocks             hostWillSleep(): BeforeWaiting · … · hostDidWake(): AfterWaiting
//   dispatch (after the poll)        HostedRun.dispatch(): what is ready (one cause), blocks,
//                                    exit checks
//
// The host polls `descriptor` for readability (the mode's wait set, as libuv's uv_backend_fd):
// it becomes readable when a wake-up, a port message, an fd source, a due timer (real clock)
// or the async queue needs the loop.

/// How long a host may sleep for a hosted run before calling ``HostedRun/dispatch()``.
public enum HostWait: Equatable, Sendable {
    /// Not at all: the pass has work already (a handled source0, queued async work) or the run
    /// only polls.
    case no
    /// Until this instant on the loop's clock (the mode's next timer, or the run's deadline),
    /// or until ``HostedRun/descriptor`` is readable. An instant already reached is a sleep of
    /// no length, still between ``HostedRun/hostWillSleep()`` and ``HostedRun/hostDidWake()``
    /// (the loop's own wait sends BeforeWaiting and AfterWaiting around it too).
    case until(LoopInstant)
    /// Until ``HostedRun/descriptor`` is readable.
    case indefinitely
}

extension Loop {
    /// Begins a run of `mode` that a host event loop drives (H1): R1–R5 up to Entry, whose
    /// observers run now, then the host calls the returned run's ``HostedRun/prepare()``,
    /// ``HostedRun/hostWillSleep()``, ``HostedRun/hostDidWake()`` and
    /// ``HostedRun/dispatch()`` around each of its own iterations. On the loop's own thread.
    ///
    /// A missing or empty mode (R3), or a stop before the first pass (L0), gives a run that has
    /// already ended (``HostedRun/result`` set, nothing to drive); begin another later.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// loop.add(LoopSource {}, mode: .default)
    /// let run = loop.beginHostedRun(timeout: .zero)
    /// _ = run.prepare()
    /// print(run.dispatch() ?? .finished)   // timedOut: a zero timeout polls once
    /// ```
    ///
    /// - Parameters:
    ///   - mode: the mode to run (not `.common`).
    ///   - timeout: the run's timeout, as for ``run(mode:timeout:returnAfterSourceHandled:)-(_,Duration,_)``;
    ///     nil: none (the host decides when the run ends).
    ///   - returnAfterSourceHandled: ``HostedRun/dispatch()`` ends the run after the first
    ///     pass that handles a source.
    public func beginHostedRun(mode: Loop.Mode = .default, timeout: Duration? = nil,
                               returnAfterSourceHandled: Bool = false) -> HostedRun {
        checkOwnerThread("Loop.beginHostedRun(mode:timeout:returnAfterSourceHandled:)")
        if mode.isCommonModes {
            Diagnostics.report(.warning, .runCommonModes,
                               "invalid mode 'kCFRunLoopCommonModes' provided to Loop.beginHostedRun; the run is finished")
            return HostedRun(endedWith: .finished, loop: self)
        }
        refreshInstrumentation()
        let held = lock.lock()
        guard let found = modeState(mode, create: false, held), !isEmpty(found, held) else {
            held.unlock()
            return HostedRun(endedWith: .finished, loop: self)
        }
        let run = RunContext(mode: found, frame: held.loop.value.pushFrame(),
                             timeout: timeout.map(RunTimeout.init) ?? .forever,
                             returnAfterSourceHandled: returnAfterSourceHandled)
        let previous = beginRun(run, held)
        held[run.frame].isHosted = true
        let firstBlocks: EarlyBlocks
        switch enterRun(run, held) {
        case .stopped(let held):
            return HostedRun(endedWith: endRun(run, previous: previous, .stopped, held), loop: self)
        case .ready(let blocks):
            firstBlocks = blocks
        case .waitNext(let held):
            // The host calls each step of a pass: the lock is not kept until its wait. The
            // first top finds no block, as the early detach did.
            held.unlock()
            firstBlocks = .detached(isCommon: nil)
        }
        run.settings.pointee.deadline = WaitDeadline(timeout: run.settings.pointee.timeout, on: self)   // L2: the run's deadline
        return HostedRun(run, previous: previous, firstBlocks: firstBlocks, loop: self)
    }
}

/// One run of a loop whose waits are its host's (H1–H4). Created by
/// ``Loop/beginHostedRun(mode:timeout:returnAfterSourceHandled:)``; used only on the loop's
/// thread, which is the host's.
///
/// ```swift
/// // In a host's iteration (GLib: a GSource's prepare, the poll function, dispatch):
/// let loop = Loop(clock: VirtualClock())
/// loop.add(LoopSource {}, mode: .default)
/// let run = loop.beginHostedRun()
/// switch run.prepare() {
/// case .no: break                        // poll the host's descriptors without blocking
/// case .until, .indefinitely:            // the host may block, watching run.descriptor
///     run.hostWillSleep()
///     // … the host's blocking poll …
///     run.hostDidWake()
/// }
/// _ = run.dispatch()                     // nil: the run goes on
/// run.end()
/// ```
public final class HostedRun {
    private let loop: Loop
    private let run: RunContext?
    private let previousMode: Unmanaged<ModeState>?
    private var firstBlocks: EarlyBlocks
    private var phase: Phase
    /// X4: the async queue's fast path is not taken in two passes in a row.
    private var didDispatchAsyncLastPass = true

    private enum Phase: Equatable {
        /// Between passes: the next call starts one (`prepare`).
        case betweenPasses
        /// `prepare` ran the top of a pass; `poll`: the pass does not wait (L-a); `asyncReady`:
        /// queued async work was taken as this pass's cause (X4); `slept`: BeforeWaiting ran.
        case prepared(handled: Bool, poll: Bool, asyncReady: Bool, slept: Bool)
        case ended(Loop.RunResult)
    }

    fileprivate init(_ run: RunContext, previous: Unmanaged<ModeState>?, firstBlocks: EarlyBlocks, loop: Loop) {
        self.loop = loop
        self.run = run
        self.previousMode = previous
        self.firstBlocks = firstBlocks
        self.phase = .betweenPasses
    }

    fileprivate init(endedWith result: Loop.RunResult, loop: Loop) {
        self.loop = loop
        self.run = nil
        self.previousMode = nil
        self.firstBlocks = .notDetached
        self.phase = .ended(result)
    }

    deinit {
        if case .ended = phase { return }
        Diagnostics.report(.error, .hostedRunAbandoned,
                           "a HostedRun was released without end() or a result: its loop's run never sent Exit and stays pushed")
    }

    /// Readable (`POLLIN`) whenever the loop has something to handle; -1 once the run ended.
    public var descriptor: Int32 {
        if case .ended = phase { return -1 }
        return run?.mode.epollFD.raw ?? -1
    }

    /// The run's result once it ended, else nil.
    public var result: Loop.RunResult? {
        if case .ended(let result) = phase { return result }
        return nil
    }

    /// The top of the next pass (H2): BeforeTimers, BeforeSources, blocks, sources0, blocks.
    /// Returns how long the host may sleep for the loop. If the host did not dispatch the
    /// previous pass, its end (blocks, exit checks) runs first, and if that ended the run,
    /// `.no` is returned and ``result`` is set.
    public func prepare() -> HostWait {
        loop.preconditionOnOwnerThread("HostedRun.prepare()")
        if case .prepared = phase { _ = dispatch() }
        guard case .betweenPasses = phase, let run else { return .no }
        let top = loop.beginPass(run, &firstBlocks)
        // X4: queued async work is this pass's cause, without BeforeWaiting and AfterWaiting.
        if !didDispatchAsyncLastPass && run.asyncPort != nil && loop.asyncReadyNow() {
            phase = .prepared(handled: top.handled, poll: true, asyncReady: true, slept: false)
            return .no
        }
        phase = .prepared(handled: top.handled, poll: top.poll, asyncReady: false, slept: false)
        if top.poll { return .no }
        // The host is told to sleep even with a wake-up for this run pending, as the loop's own
        // wait sleeps and returns at once: BeforeWaiting and AfterWaiting still fire (H2). A
        // pending wake-up's event is in the set, so the host's poll returns at once; one that
        // the look below took is a sleep of no length.
        if loop.takeStaleReadiness(run) { return .until(LoopInstant(nanoseconds: loop.clock.nowNanoseconds)) }
        let deadline = loop.lock.withLock { run.deadline.earlier(thanTimer: run.mode.armedDeadline($0)) }
        return deadline == .max ? .indefinitely : .until(LoopInstant(nanoseconds: deadline))
    }

    /// The host is about to block in its poll with a non-zero timeout (H2): BeforeWaiting, and
    /// the run counts as waiting (``Loop/isWaiting``). Only after ``prepare()`` returned a
    /// wait; a host that polls without blocking calls neither this nor ``hostDidWake()``.
    public func hostWillSleep() {
        loop.preconditionOnOwnerThread("HostedRun.hostWillSleep()")
        guard case .prepared(let handled, let poll, let asyncReady, false) = phase, !poll, let run else { return }
        loop.notify(.beforeWaiting, run)
        let held = loop.lock.lock()
        held.loop.sleeping = true                                          // W4: isWaiting from here
        if held.loop.sleepWatchers > 0 { loop.sleepStarted.broadcast() }
        run.mode.syncTimerFD(held)   // T3: a timer moved meanwhile makes the descriptor readable
        held.unlockReporting()       // a timer descriptor that could not be armed
        if loop.hasSink { loop.emit(.sleep, "", run.mode.mode) }
        phase = .prepared(handled: handled, poll: poll, asyncReady: asyncReady, slept: true)
    }

    /// The host's blocking poll returned (H2): AfterWaiting.
    public func hostDidWake() {
        loop.preconditionOnOwnerThread("HostedRun.hostDidWake()")
        guard case .prepared(_, _, _, true) = phase, let run else { return }
        let held = loop.lockAfterWait()
        held.loop.sleeping = false                                         // W4: isWaiting is false again
        held.unlock()
        if loop.hasSink { loop.emit(.wake, "", run.mode.mode) }
        loop.notify(.afterWaiting, run)
    }

    /// The rest of the pass (H2): what is ready, without blocking (one cause, L-c), blocks, the
    /// exit checks. Returns the run's result when it ended (Exit has run), nil while it goes on.
    /// Without a ``prepare()`` before it, it prepares first.
    @discardableResult
    public func dispatch() -> Loop.RunResult? {
        loop.preconditionOnOwnerThread("HostedRun.dispatch()")
        if case .betweenPasses = phase { _ = prepare() }
        guard case .prepared(let handledAtTop, _, let asyncReady, _) = phase, let run else { return result }
        let cause: UnderLock<Cause>
        if asyncReady {
            let held = loop.lock.lock()
            held[run.frame].ignoresWakeUps = true
            cause = UnderLock(held: held, value: Cause(.async))
        } else {
            // The host has slept (or not) already: the loop only polls its wait set.
            let held = loop.lock.lock()
            let plan = WaitPlan(poll: true, quiet: loop.isQuiet(run, held),
                                armed: run.mode.armedDeadline(held), batch: held[run.mode].files.count > 1)
            held.unlockReporting()   // a main-queue watch that failed (`isQuiet`)
            let woke = loop.wait(run, plan)
            woke.held[run.frame].ignoresWakeUps = true
            cause = woke
        }
        if case .failed = cause.value.live {
            return end(with: .finished, cause.held)
        }
        let handling = loop.handle(cause.value, run, cause.held)
        let handled = handling.value
        let held = handling.held
        didDispatchAsyncLastPass = handled.dispatchedAsync
        if let result = loop.exitCheck(run, handled: handledAtTop || handled.handled, held) {
            return end(with: result, held)
        }
        held[run.frame].ignoresWakeUps = false   // W3, as at the end of a native pass (issue 26)
        run.frame.endPollingPass(held)
        held.unlock()
        phase = .betweenPasses
        return nil
    }

    /// Ends the run now, as a stop would (Exit runs): for a host that stops driving it. Returns
    /// the result (the earlier one if it had ended already).
    @discardableResult
    public func end() -> Loop.RunResult {
        loop.preconditionOnOwnerThread("HostedRun.end()")
        if let result { return result }
        return end(with: .stopped, loop.lock.lock())
    }

    private func end(with result: Loop.RunResult, _ held: consuming LoopLock.Held) -> Loop.RunResult {
        guard let run else {
            held.unlock()
            return result
        }
        phase = .ended(result)
        return loop.endRun(run, previous: previousMode, result, held)
    }
}

extension Loop {
    /// Before a host sleeps on a hosted run's descriptor (H1): takes what would keep the mode's
    /// wait set readable with nothing for this run, which the loop's own wait takes inside its
    /// wait loop and a host's poll cannot. That is an event of the edge-triggered wake-up
    /// descriptor (each write leaves one in every mode's set, so runs of other modes leave them
    /// behind) and a timer descriptor that expired for a deadline that has moved. Sources' events
    /// are level-triggered and stay. Returns true when the host must not sleep: a wake-up for
    /// this run was taken (its event is gone), or one whose write failed.
    func takeStaleReadiness(_ run: RunContext) -> Bool {
        if takeLostWakeUp(for: run.serial) { return true }
        let tokens = run.frame.scratch.pointee.readyTokens
        let flags = run.frame.scratch.pointee.readyFlags
        // A failure here is the wait's to report: dispatch() waits on the same set.
        let count = rlk_epoll_wait_ns(run.mode.epollFD.raw, tokens, flags, Int32(RunFrame.readyCapacity), 0)  // retries EINTR
        var wokenForRun = false
        for index in 0..<Int(max(count, 0)) {
            switch tokens[index] {
            case WaitToken.wake:
                // Taken as the wait takes it: the pending wake-up is consumed with its event.
                wokenForRun = lock.withLock { takeWakeUpEvent(for: run.serial, $0) }
            case WaitToken.timer:
                drainCounter(run.mode.timerFD.raw, "the timer descriptor of mode '\(run.mode.mode)'").reported()
            default:
                break
            }
        }
        return wokenForRun
    }
}
