import RunLoopDiagnostics

// The steps of one pass (L3), as `runPasses` takes them and a hosted run (Loop+Hosting.swift)
// takes them from its host's iteration:
//   beginPass     BeforeTimers, BeforeSources, blocks, sources0, blocks      (CF: the top of the loop)
//   waitForCause  the async queue's fast path, or BeforeWaiting, the wait,
//                 AfterWaiting                                               (CF: poll / sleep / wake)
//   handle        the one cause the wait reported, then blocks              (CF: the handling branch)
// and the exit checks in Loop+Run.swift.

/// What the top of a pass found.
struct PassTop {
    /// A source0 was performed (S4: any one counts).
    let handled: Bool
    /// L-a: the wait only polls, without BeforeWaiting and AfterWaiting, because a source0 was
    /// handled or the run's timeout is ≤ 0.
    let poll: Bool
}

/// What a wait (or the async queue's fast path) leaves the pass to handle.
struct Cause {
    let live: LivePort
    /// The clock reading that found a timer due, so handling it reads the clock no second time.
    var timerTime: TimerPassTime? = nil

    init(_ live: LivePort, timerTime: TimerPassTime? = nil) {
        self.live = live
        self.timerTime = timerTime
    }
}

/// What the handling step of a pass did.
struct Handled {
    /// A source1, an fd source or the async queue counts as handled (L-d); timers and blocks
    /// do not.
    var handled = false
    /// The async queue was drained: the next pass may not take its fast path (X4).
    var dispatchedAsync = false
}

/// What the wait of a pass may do, decided in the critical section before it.
struct WaitPlan {
    /// L-a: a polling wait (a zero timeout, no BeforeWaiting or AfterWaiting).
    let poll: Bool
    /// Nothing in the mode's wait set can be ready (see `isQuiet`): a poll, or a virtual wait,
    /// needs no system call.
    let quiet: Bool
    /// The mode's timer deadline when the wait began (`.max`: none).
    let armed: UInt64
    /// The mode has several fd sources: one wait collects every ready one (handled together).
    let batch: Bool
}

extension Loop {
    /// The top of a pass: L3's count, L-g's stale wake-up, BeforeTimers (L-b: only a
    /// notification), BeforeSources, blocks (B3), the signalled sources0 (S2), and blocks again
    /// when a source0 ran (B3). Lock not held.
    @inline(__always)
    func beginPass(_ run: RunContext, _ firstBlocks: inout EarlyBlocks) -> PassTop {
        countPass()
        refreshInstrumentation()
        #if RLK_MUTANT_ISSUE_26
        // The defect of issue 26, put back for a mutant build (`-Xswiftc -DRLK_MUTANT_ISSUE_26`)
        // that shows the lost-wake-up stress still finds it: the flag cleared here with a plain
        // store, outside the lock, instead of in the previous pass's exit-check section.
        run.frame.controlStorage.unshared.pointee.ignoresWakeUps = false
        #endif
        dropStaleWakeUp(run)
        notify(.beforeTimers, run)
        notify(.beforeSources, run)
        runFirstBlocks(run, &firstBlocks)
        let handled = doSources0(run)
        if handled { doBlocks(run) }
        return PassTop(handled: handled, poll: handled || run.deadline == .poll)
    }

    /// The middle of a pass. Work already in the async queue is taken without BeforeWaiting and
    /// AfterWaiting, but not in two passes in a row (X4, CF's `didDispatchPortLastTime`).
    /// Otherwise BeforeWaiting (unless polling, L-a), the wait, AfterWaiting (L-a). The cause
    /// comes in an `UnderLock` with the lock's `Held` token, the run ignoring wake-ups until the
    /// end of the pass (W3).
    @inline(__always)
    func waitForCause(_ run: RunContext, poll: Bool, asyncFastPath: Bool) -> UnderLock<Cause> {
        if asyncFastPath && run.asyncPort != nil && asyncReadyNow() {
            let held = lock.lock()
            held[run.frame].ignoresWakeUps = true
            return UnderLock(held: held, value: Cause(.async))
        }
        if !poll { notify(.beforeWaiting, run) }
        return waitHolding(run, poll: poll, lock.lock())
    }

    /// L3's count. Only the owner thread writes it, so a load and a store do: an atomic add is a
    /// locked instruction, about 8 ns on every pass on the Intel host, and a reader on another
    /// thread needs only a count that was current at some moment.
    @inline(__always)
    func countPass() {
        assertOwnerThread("Loop pass")
        passCounter.store(passCounter.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// The top of a run's first pass when it has nothing to do (`firstTopIsEmpty`): only L3's
    /// count.
    @inline(__always)
    func emptyFirstTop(_ run: RunContext) -> PassTop {
        countPass()
        return PassTop(handled: false, poll: run.deadline == .poll)
    }

    /// The wait from its critical section on, the lock held: a quiet poll decided in it, or
    /// the wait in the kernel.
    @inline(__always)
    func waitHolding(_ run: RunContext, poll: Bool, _ held: consuming LoopLock.Held) -> UnderLock<Cause> {
        let plan = planWait(run, poll: poll, held)
        if plan.poll && plan.quiet {
            let cause = pollQuietly(run, plan, held)
            held[run.frame].ignoresWakeUps = true
            return UnderLock(held: held, value: cause)
        }
        return waitInKernel(run, plan, held)
    }

    /// The wait that may block (or polls the wait set), with W4's `isWaiting` around it, then
    /// AfterWaiting. Out of line: a pass that gets here makes a system call anyway.
    @inline(never)
    private func waitInKernel(_ run: RunContext, _ plan: WaitPlan, _ held: consuming LoopLock.Held) -> UnderLock<Cause> {
        let poll = plan.poll
        held.loop.sleeping = true                                     // W4: isWaiting from here
        if held.loop.sleepWatchers > 0 { sleepStarted.broadcast() }   // see `waitUntilWaiting`
        run.mode.syncTimerFD(held)   // T3: from now on `rearm` writes it as it changes
        held.unlockReporting()       // a timer descriptor that could not be armed, a main-queue watch that failed
        if !poll && hasSink { emit(.sleep, "", run.mode.mode) }
        let woke = wait(run, plan)
        let after = woke.held
        after.loop.sleeping = false                                   // W4: isWaiting is false again
        after[run.frame].ignoresWakeUps = true
        guard !poll && (hasSink || run.mode.liveObserverMask.load(ordering: .relaxed)
                            & Loop.Activity.afterWaiting.rawValue != 0) else {
            return UnderLock(held: after, value: woke.value)
        }
        after.unlock()
        if hasSink { emit(.wake, "", run.mode.mode) }
        notify(.afterWaiting, run)
        return UnderLock(held: lock.lock(), value: woke.value)
    }

    /// The critical section before a wait decides how it may wait.
    @inline(__always)
    private func planWait(_ run: RunContext, poll: Bool, _ held: borrowing LoopLock.Held) -> WaitPlan {
        let quiet = (poll || virtualClock != nil || wakeUpFlags.isNoted) && isQuiet(run, held)
        return WaitPlan(poll: poll, quiet: quiet, armed: run.mode.armedDeadline(held),
                        batch: held[run.mode].files.count > 1)
    }

    /// No port or fd source in the mode, no written wake-up pending (a noted one is not in the
    /// set), no async work to be seen (on `Loop.main`: no poke of the main queue, see
    /// `mainQueueIdle`): nothing in the mode's wait set can be ready.
    @inline(__always)
    func isQuiet(_ run: RunContext, _ held: borrowing LoopLock.Held) -> Bool {
        // The main queue first, so that the watch's completions are consumed on every pass.
        let asyncQuiet = run.asyncPort == nil || (isMainLoop ? mainQueueIdle(held) : held.loop.queues.asyncWork.isEmpty)
        return asyncQuiet && !hasWrittenWakeUpPending(held)
            && held[run.mode].ports.isEmpty && held[run.mode].files.isEmpty
    }

    /// The end of a pass: the one cause the wait reported (L-c) — timers (T4), the async queue
    /// (X4), one port or fd source (S8), or several ready fd sources — then the blocks (B3).
    /// Takes the lock's `Held` token and gives one back in the `UnderLock` result; every callout
    /// runs between an `unlock()` and a `lock()` of that token.
    @inline(__always)
    func handle(_ cause: Cause, _ run: RunContext, _ held: consuming LoopLock.Held) -> UnderLock<Handled> {
        var result = Handled()
        var held = held
        switch cause.live {
        case .none, .wake, .failed:
            break
        case .timer:
            held = doTimers(run, time: cause.timerTime, held)
        case .async:
            held.unlock()
            drainAsyncQueue(run)
            held = lock.lock()
            result.handled = true
            result.dispatchedAsync = true
        case .source(let token, let ready):
            held.unlock()
            result.handled = doSource1(token: token, ready: ready, run)
            held = lock.lock()
        case .files:
            held.unlock()
            result.handled = doReadyFileSources(run)
            held = lock.lock()
        }
        if !held.loop.queues.blocks.isEmpty {
            held.unlock()
            doBlocks(run)
            held = lock.lock()
        }
        return UnderLock(held: held, value: result)
    }
}
