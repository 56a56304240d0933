import RunLoopDiagnostics
import CRunLoopShims

// Running a loop: CFRunLoopRunSpecific (`runSpecific`, rules R1–R7) and the passes of
// __CFRunLoopRun (`runPasses`, rules L0–L3, L-a–L-g), in CF's order. Each step of a pass is a
// function of its own in Loop+Pass.swift; the places where the loop does less work than CF
// while keeping CF's observable order are in Loop+Shortcuts.swift.

extension Loop {
    /// Runs the loop in `mode` until the timeout, a stop, a handled source (when
    /// `returnAfterSourceHandled`), or the mode becoming empty (CFRunLoopRunInMode).
    ///
    /// Must be called on the loop's own thread. A timeout of zero or less makes exactly one
    /// polling pass; one beyond CF's interval limit (about 16 years) means no timeout.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// switch loop.run(mode: .default, timeout: .milliseconds(500), returnAfterSourceHandled: true) {
    /// case .handledSource: print("a source ran")
    /// case .finished: print("nothing to run in this mode")
    /// default: break
    /// }
    /// ```
    @discardableResult
    public func run(mode: Loop.Mode = .default, timeout: Duration,
                    returnAfterSourceHandled: Bool = false) -> Loop.RunResult {
        checkOwnerThread("Loop.run(mode:timeout:returnAfterSourceHandled:)")
        return runSpecific(mode, timeout: RunTimeout(timeout), stopAfterHandle: returnAfterSourceHandled)
    }

    /// CF-style convenience with the timeout in seconds (`CFRunLoopRunInMode`'s
    /// `CFTimeInterval`): ≤ 0 polls once; NaN is treated as 0 and reported as a diagnostic.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// loop.run(mode: .default, timeout: 0)   // one polling pass
    /// ```
    @discardableResult
    public func run(mode: Loop.Mode = .default, timeout seconds: Double,
                    returnAfterSourceHandled: Bool = false) -> Loop.RunResult {
        checkOwnerThread("Loop.run(mode:timeout:returnAfterSourceHandled:)")
        var timeout = RunTimeout.poll
        if seconds.isNaN {
            Diagnostics.report(.warning, .runTimeoutNaN,
                               "Loop.run called with a NaN timeout; treated as 0 (one polling pass)")
        } else {
            timeout = RunTimeout(seconds: seconds)
        }
        return runSpecific(mode, timeout: timeout, stopAfterHandle: returnAfterSourceHandled)
    }

    /// Runs the default mode until it is stopped or finished (CFRunLoopRun, R6).
    ///
    /// ```swift
    /// loop.run()   // returns after loop.stop() or when the default mode is empty
    /// ```
    public func run() {
        checkOwnerThread("Loop.run()")
        while true {
            let result = runSpecific(.default, timeout: .forever, stopAfterHandle: false)
            if result == .stopped || result == .finished { return }
        }
    }

    /// Runs the default mode until `deadline`, Foundation style (F2): repeated runs that return
    /// after each handled source; returns early only when the default mode is finished (R7).
    /// A `stop()` ends the current run, not this call.
    ///
    /// ```swift
    /// loop.run(until: loop.clock.now.advanced(by: .milliseconds(100)))
    /// ```
    public func run(until deadline: LoopInstant) {
        checkOwnerThread("Loop.run(until:)")
        while true {
            let now = clock.nowNanoseconds
            guard now < deadline.nanoseconds, !isFinished(mode: .default) else { return }
            runSpecific(.default, timeout: RunTimeout(nanoseconds: deadline.nanoseconds - now), stopAfterHandle: true)
        }
    }

    /// Whether running `mode` would return `.finished` at once: the mode is missing or empty
    /// (R7, `_CFRunLoopFinished`).
    public func isFinished(mode: Loop.Mode) -> Bool {
        lock.withLock { held in
            guard !held.loop.tornDown, mode != .common, let state = held.loop.modes[mode] else { return true }
            return isEmpty(state, held)
        }
    }

    /// R4, CF's `__CFRunLoopModeIsEmpty`: a mode without sources, timers, blocks for it or (R4a)
    /// async work it would service. Observers do not count.
    func isEmpty(_ state: ModeState, _ held: borrowing LoopLock.Held) -> Bool {
        isEmptyInPass(state, held)
    }

    /// `isEmpty`, inlined into the pass's exit checks (L-f), which make it on every pass.
    @inline(__always)
    private func isEmptyInPass(_ state: ModeState, _ held: borrowing LoopLock.Held) -> Bool {
        // A mode whose wait set failed counts as empty, so its runs end (see `waitFailed`).
        if held[state].waitFailed { return true }
        // R4a: on the main loop, the main queue keeps a common mode non-empty; on any other
        // loop, queued async work keeps a common mode non-empty (an observer-only mode stays
        // empty: case 1 of the reference cases).
        if isMainLoop {
            if mainQueueClause(state, held) { return false }
        } else if asyncClauseActive(state, held) && !held.loop.queues.asyncWork.isEmpty {
            return false
        }
        if !held[state].isEmptyOfItems { return false }   // R4b–d: sources0, ports, fd sources, timers
        return !hasBlock(for: state, held)                  // R4e: blocks for this mode
    }

    /// CFRunLoopRunSpecific: R1–R3 decide whether the run happens at all, then R5 runs it.
    @discardableResult
    func runSpecific(_ name: Loop.Mode, timeout: RunTimeout, stopAfterHandle: Bool) -> Loop.RunResult {
        // R1: the common-modes pseudo-mode cannot be run.
        if name.isCommonModes {
            Diagnostics.report(.warning, .runCommonModes,
                               "invalid mode 'kCFRunLoopCommonModes' provided to Loop.run; returning .finished")
            return .finished
        }
        refreshInstrumentation()
        let held = lock.lock()
        // R2: a torn-down loop runs nothing. R3: a missing mode is not created, and a missing
        // or empty one returns .finished with no Entry or Exit.
        let found = modeForRun(name, held)
        guard let found, !found._withUnsafeGuaranteedRef({ isEmpty($0, held) }) else {
            let unavailable = held.loop.tornDown ? nil : held.loop.unavailableModes[name]
            held.unlock()
            if let unavailable {
                Diagnostics.report(.warning, .modeUnavailable,
                                   "mode '\(name)' could not be created (\(unavailable)); Loop.run returned .finished")
            }
            return .finished
        }
        // R5.1: fresh per-run data, one frame per nesting depth (reused, so a run allocates
        // nothing in steady state).
        let frame = held.loop.value.pushFrame()
        // The run borrows its mode, which the loop keeps (modes are never removed): a strong
        // reference in the run's context cost a retain and a release per run, 52 instructions.
        // The lock's token reaches the closure through an optional, as a closure cannot take
        // ownership of a value it captures.
        var token = Optional(held)
        return found._withUnsafeGuaranteedRef { mode in
            runPushed(RunContext(mode: mode, frame: frame, timeout: timeout, returnAfterSourceHandled: stopAfterHandle),
                      token.take()!)
        }
    }

    /// The mode named `name`, looked up without creating it (R3).
    @inline(__always)
    private func modeForRun(_ name: Loop.Mode, _ held: borrowing LoopLock.Held) -> Unmanaged<ModeState>? {
        if held.loop.tornDown { return nil }
        if let last = lastLookedUp(name, held) { return last }
        return modeState(name, create: false, held).map { Unmanaged.passUnretained($0) }
    }

    /// R5.1 (rest) to R5.7: the run between its push and its pop.
    private func runPushed(_ run: RunContext, _ held: consuming LoopLock.Held) -> Loop.RunResult {
        let previous = beginRun(run, held)
        let passes = runPasses(run, enterRun(run, held))          // Entry, a stop before the first pass, L1; the passes
        return endRun(run, previous: previous, passes.value, passes.held)
    }

    /// R5.1 (rest) and R5.2: the run's flags, serial and mode. Returns the mode of the run it
    /// nests in, for `endRun`.
    @inline(__always)
    func beginRun(_ run: RunContext, _ held: borrowing LoopLock.Held) -> Unmanaged<ModeState>? {
        held[run.frame].stopped = false
        held[run.frame].ignoresWakeUps = false                   // W3: wake-ups count from here
        run.frame.endPollingPass(held)
        held[run.frame].isHosted = false
        held.loop.runSerial &+= 1
        held[run.frame].serial = held.loop.runSerial
        run.settings.pointee.serial = held.loop.runSerial
        let previous = held.loop.runningMode                     // R5.2: the loop's current mode becomes the run's
        held.loop.runningMode = Unmanaged.passUnretained(run.mode)
        // O4: the run's observer snapshot (the frame holds none: the run that used it last
        // dropped it).
        if run.mode.liveObserverMask.load(ordering: .relaxed) != 0 { run.frame.holdObserverSnapshot(run.mode, held) }
        return previous
    }

    /// R5.5 Exit (still this mode), R5.6 (what L1 took out of the wait set goes back), the pop,
    /// R5.7: the result.
    @inline(__always)
    func endRun(_ run: RunContext, previous: Unmanaged<ModeState>?, _ result: Loop.RunResult,
                _ held: consuming LoopLock.Held) -> Loop.RunResult {
        var held = held
        if hasSink || run.mode.liveObserverMask.load(ordering: .relaxed) & Loop.Activity.exit.rawValue != 0 {
            held.unlock()
            notify(.exit, run)
            held = lock.lock()
        }
        restoreAsyncPort(run, held)
        held.loop.value.popFrame()
        held.loop.runningMode = previous
        run.frame.returnObserverSnapshot(run.mode, held)
        held.unlock()
        run.frame.releaseObserverSnapshot()
        if hasSink { emit(.runEnd(result), "", run.mode.mode) }
        return result
    }

    /// R5.3 Entry observers, then L0 (a stop before the first pass) and L1 (does this run
    /// service the async queue). Without Entry callouts this all happens in the run's first
    /// critical section; with them, L0 and L1 are settled before they run and kept unless
    /// something changed them meanwhile (`settleBeforeEntry`).
    @inline(__always)
    func enterRun(_ run: RunContext, _ held: consuming LoopLock.Held) -> RunStart {
        guard hasSink || run.mode.liveObserverMask.load(ordering: .relaxed) & Loop.Activity.entry.rawValue != 0 else {
            return startPasses(run, held)
        }
        let settled = settleBeforeEntry(run, held)
        held.unlock()
        if hasSink { emit(.runBegin, "", run.mode.mode) }
        notify(.entry, run)
        if settled.stillHolds(after: self) { return .ready(firstBlocks: .notDetached) }
        return startPasses(run, lock.lock())
    }

    /// L0 and L1 with the lock held, then the lock is released for the first pass.
    @inline(__always)
    private func startPasses(_ run: RunContext, _ held: consuming LoopLock.Held) -> RunStart {
        // L0: a stop issued before the first pass (from an Entry observer, or a sticky
        // stop(mode:), W2) ends the run at once.
        if takeStop(run, held) { return .stopped(held) }
        run.settings.pointee.asyncPort = asyncPortForRun(run, held)      // L1: does this run service the async queue
        let firstBlocks = detachFirstBlocksEarly(run, held)
        if firstTopIsEmpty(run, firstBlocks) { return .waitNext(held) }
        held.unlock()
        return .ready(firstBlocks: firstBlocks)
    }

    /// __CFRunLoopRun: the passes of one run, each in CF's order (L3): the top of the pass
    /// (BeforeTimers, BeforeSources, blocks, sources0), the wait (BeforeWaiting, the wait,
    /// AfterWaiting, or the async queue's fast path), the one cause the wait reported (L-c),
    /// blocks, and the exit checks (L-e). The `UnderLock` result hands the lock's `Held` token on to
    /// the run's Exit.
    private func runPasses(_ run: RunContext, _ start: consuming RunStart) -> UnderLock<Loop.RunResult> {
        var firstBlocks = EarlyBlocks.notDetached
        var didDispatchAsyncLastPass = true
        switch consume start {
        case .stopped(let held):
            return UnderLock(held: held, value: .stopped)
        case .ready(let blocks):
            firstBlocks = blocks
            run.settings.pointee.deadline = WaitDeadline(timeout: run.settings.pointee.timeout, on: self)   // L2: the run's deadline
        case .waitNext(let held):
            run.settings.pointee.deadline = WaitDeadline(timeout: run.settings.pointee.timeout, on: self)
            // An empty first top (Loop+Shortcuts.swift): the run's first critical section goes
            // on into the first wait's.
            let top = emptyFirstTop(run)
            switch endPass(run, top, waitHolding(run, poll: top.poll, held), &didDispatchAsyncLastPass) {
            case .ended(let result): return result
            case .goOn: break
            }
        }
        while true {
            let top = beginPass(run, &firstBlocks)                                // the top of the pass: BT, BS, blocks, sources0
            let cause = waitForCause(run, poll: top.poll, asyncFastPath: !didDispatchAsyncLastPass)
            switch endPass(run, top, cause, &didDispatchAsyncLastPass) {
            case .ended(let result): return result
            case .goOn: continue
            }
        }
    }

    /// The rest of a pass from the cause its wait reported: the cause (L-c), blocks, the exit
    /// checks (L-e); the run's result with the lock held, or on to the next pass with the lock
    /// released.
    @inline(__always)
    private func endPass(_ run: RunContext, _ top: PassTop, _ cause: consuming UnderLock<Cause>,
                         _ didDispatchAsyncLastPass: inout Bool) -> PassEnd {
        // A wait set that failed ends the run (reported by the wait).
        if case .failed = cause.value.live { return .ended(UnderLock(held: cause.held, value: .finished)) }
        let handling = handle(cause.value, run, cause.held)                        // the one cause of the wake (L-c), blocks
        let handled = handling.value
        let held = handling.held
        didDispatchAsyncLastPass = handled.dispatchedAsync
        if let result = exitCheck(run, handled: top.handled || handled.handled, held) {  // the exit checks, in CF's order (L-e)
            return .ended(UnderLock(held: held, value: result))
        }
        // W3: wake-ups count again from the top of the next pass. Cleared in this critical
        // section, not after it: a producer that queued work while the flag was set (so
        // wrote nothing) did so before this section, and the next pass looks at the
        // queues after it, so it finds that work (issue 26).
        #if !RLK_MUTANT_ISSUE_26
        held[run.frame].ignoresWakeUps = false
        #endif
        run.frame.endPollingPass(held)
        held.unlock()
        return .goOn
    }

    /// L-e, in CF's order: handled and return-after-source-handled → handled source; deadline
    /// passed → timed out; the run stopped, then the mode stopped → stopped; L-f: the mode empty
    /// (looked at only now, after the wait) → finished; nil: another pass.
    @inline(__always)
    func exitCheck(_ run: RunContext, handled: Bool, _ held: borrowing LoopLock.Held) -> Loop.RunResult? {
        if handled && run.returnAfterSourceHandled { return .handledSource }
        if run.deadline.isReached(on: self) { return .timedOut }
        if takeStop(run, held) { return .stopped }
        if isEmptyInPass(run.mode, held) { return .finished }
        return nil
    }

    /// A pending stop of this run (`stop()`) or of its mode (sticky `stop(mode:)`, W2),
    /// cleared as it is taken. The run's own stop is looked at first, as CF does.
    @inline(__always)
    func takeStop(_ run: RunContext, _ held: borrowing LoopLock.Held) -> Bool {
        if held[run.frame].stopped {
            held[run.frame].stopped = false
            return true
        }
        if held[run.mode].stopped {
            held[run.mode].stopped = false
            return true
        }
        return false
    }
}

extension Loop {
    /// The loop clock's reading in nanoseconds; the monotonic clock is read directly, without
    /// a call through the `any LoopClock` existential.
    @inline(__always)
    func clockNanoseconds() -> UInt64 {
        usesMonotonicClock ? rlk_monotonic_ns() : clock.nowNanoseconds
    }
}

/// How a pass ends: the run's result, the lock held for its Exit, or on to the next pass.
private enum PassEnd: ~Copyable {
    case ended(UnderLock<Loop.RunResult>)
    case goOn
}

/// How a run reaches its first pass: stopped at L0 (the lock still held, for the run's Exit),
/// ready, with the lock released and the first pass's blocks perhaps already detached, or at
/// its first wait, the lock still held, when that pass's top has nothing to do.
enum RunStart: ~Copyable {
    case stopped(LoopLock.Held)
    case ready(firstBlocks: EarlyBlocks)
    case waitNext(LoopLock.Held)
}
