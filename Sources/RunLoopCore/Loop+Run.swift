import RunLoopDiagnostics
import CRunLoopShims

// Running: CFRunLoopRunSpecific (R1–R6) and the pass loop of __CFRunLoopRun (L0–L3, L-a–L-g).

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
        lock.withLock {
            guard !guarded.tornDown, mode != .common, let state = guarded.modes[mode] else { return true }
            return isEmptyLocked(state)
        }
    }

    /// R4, `__CFRunLoopModeIsEmpty`. Observers do not count. Lock held.
    func isEmptyLocked(_ state: ModeState) -> Bool {
        if state.guarded.waitFailed { return true }  // see `ModeState.waitFailed`
        // R4a: the main-queue clause (main loop), or its per-loop analogue: a common mode of a
        // loop whose async queue holds work (so an observer-only mode stays empty, case 1).
        if isMainLoop {
            if mainQueueClauseLocked(state) { return false }
        } else if asyncClauseActiveLocked(state) && !guarded.asyncPending.isEmpty {
            return false
        }
        if !state.isEmptyOfItems { return false }  // R4b–d
        return !hasBlockLocked(for: state)          // R4e
    }

    /// CFRunLoopRunSpecific.
    @discardableResult
    func runSpecific(_ name: Loop.Mode, timeout: RunTimeout, stopAfterHandle: Bool) -> Loop.RunResult {
        // R1: the common-modes pseudo-mode cannot be run.
        if name.isCommonModes {
            Diagnostics.report(.warning, .runCommonModes,
                               "invalid mode 'kCFRunLoopCommonModes' provided to Loop.run; returning .finished")
            return .finished
        }
        refreshInstrumentation()
        lock.lock()
        // R2: a torn-down loop.
        // R3: look the mode up without creating it; missing or empty → .finished, no Entry/Exit.
        // The run holds its mode and frame unretained: the loop keeps both for its lifetime
        // (modes are never removed, M1; frames only grow), which saves reference counting on
        // every run.
        let found: Unmanaged<ModeState>
        if let last = guarded.tornDown ? nil : lookupUnretainedLocked(name) {
            found = last
        } else if let state = modeStateLocked(name, create: false) {
            found = Unmanaged.passUnretained(state)
        } else {
            let unavailable = guarded.tornDown ? nil : guarded.unavailableModes[name]
            lock.unlock()
            if let unavailable {
                Diagnostics.report(.warning, .modeUnavailable,
                                   "mode '\(name)' could not be created (\(unavailable)); Loop.run returned .finished")
            }
            return .finished
        }
        return found._withUnsafeGuaranteedRef { state in
            guard !isEmptyLocked(state) else {
                lock.unlock()
                return .finished
            }
            // R5.1: push fresh per-run data.
            guarded.depth += 1
            if guarded.frames.count == guarded.depth { guarded.frames.append(RunFrame()) }
            let frame = guarded.frames.withUnsafeBufferPointer { Unmanaged.passUnretained($0[guarded.depth]) }
            return frame._withUnsafeGuaranteedRef { frame in
                runPushed(name, state, frame, timeout, stopAfterHandle)
            }
        }
    }

    /// R5.1 (rest) to R5.7, lock held on entry, for a mode and a frame the loop keeps alive.
    private func runPushed(_ name: Loop.Mode, _ state: ModeState, _ frame: RunFrame, _ timeout: RunTimeout,
                           _ stopAfterHandle: Bool) -> Loop.RunResult {
        frame.stopped = false
        frame.ignoreWakeUps = false
        guarded.runSerial &+= 1
        frame.serial = guarded.runSerial
        // R5.2
        let previous = guarded.runningMode
        guarded.runningMode = Unmanaged.passUnretained(state)

        // R5.3 Entry. Without a sink or Entry observers nothing runs between the push and the
        // first pass, so the run goes on in the same critical section (fewer lock round trips).
        // An Entry observer another thread adds meanwhile counts as added after Entry.
        // With Entry callouts, L0/L1 are settled before them and stay valid unless something
        // that changes them happened meanwhile (`controlEpoch`); only then is the lock taken
        // again to redo them after Entry, where CF does them.
        var settledPort: Int32? = nil
        let observed = state.liveObserverMask.load(ordering: .relaxed)
        // O4: the run's observer snapshot, in this critical section (the frame holds none:
        // the run that used it last dropped it).
        if observed != 0 { _ = frame.holdObserverSnapshotLocked(state) }
        if hasSink || observed & Loop.Activity.entry.rawValue != 0 {
            let epoch = controlEpoch.load(ordering: .relaxed)
            let unstopped = !frame.stopped && !state.guarded.stopped
            let port = unstopped ? asyncPortForRun(state, frame) : -1
            lock.unlock()
            if hasSink { emit(.runBegin, "", name) }
            notify(.entry, state, frame)
            if unstopped && controlEpoch.load(ordering: .acquiring) == epoch {
                settledPort = port
            } else {
                lock.lock()
            }
        }
        // R5.4; returns with the lock held.
        let result = runPasses(state, frame, timeout, stopAfterHandle, settledPort: settledPort)
        // R5.5 Exit: still this mode. Same shortcut as Entry.
        if hasSink || state.liveObserverMask.load(ordering: .relaxed) & Loop.Activity.exit.rawValue != 0 {
            lock.unlock()
            notify(.exit, state, frame)
            lock.lock()
        }
        restoreAsyncPort(state, frame)                                   // R5.6
        guarded.depth -= 1
        guarded.runningMode = previous
        lock.unlock()
        frame.releaseObserverSnapshot()
        if hasSink { emit(.runEnd(result), "", name) }
        return result                                                    // R5.7
    }

    /// __CFRunLoopRun: the passes of one run, step for step in CF's order (L0–L3). Returns with the
    /// lock held; every callout and wait runs with it released. Called with the lock held,
    /// unless `settledPort` carries L0/L1's outcome (no stop, this async port) from before
    /// the Entry callouts.
    private func runPasses(_ state: ModeState, _ frame: RunFrame, _ timeout: RunTimeout,
                           _ stopAfterHandle: Bool, settledPort: Int32?) -> Loop.RunResult {
        let asyncPort: Int32
        // The first pass's B3 queue, when L1's critical section already detached it.
        var firstBlocks = EarlyBlocks.notDetached
        if let settledPort {
            asyncPort = settledPort
        } else {
            // L0: a stop issued before the first pass (e.g. from an Entry observer, or a sticky
            // stop(mode:), W2) ends the run at once.
            if consumeStop(state, frame) { return .stopped }
            // L1: the async queue's port, under R4a's condition (-1 = none).
            asyncPort = asyncPortForRun(state, frame)
            // Between here and the first pass's B3 nothing runs when no stale wake-up is to be
            // drained and no BT/BS observer or sink is installed, so the queue is detached now,
            // in this critical section (one lock round trip fewer per run). A block or an
            // observer another thread adds meanwhile counts as added after B3 / BT, BS.
            if !wakePending && !hasSink && state.liveObserverMask.load(ordering: .relaxed)
                & (Loop.Activity.beforeTimers.rawValue | Loop.Activity.beforeSources.rawValue) == 0 {
                firstBlocks = .detached(isCommon: detachBlocksLocked(state, frame))
            }
            lock.unlock()
        }

        // L2: the deadline. ≤ 0 → poll; beyond the interval limit → forever (X5: no timer
        // needed, the waiter computes its own timeout).
        let deadline: UInt64
        switch timeout.nanoseconds {
        case 0: deadline = 0
        case .max: deadline = .max
        case let span: deadline = Nanoseconds.add(clockNanoseconds(), span)
        }
        var didDispatchPortLastTime = true

        while true {
            // L3
            _ = passCounter.wrappingAdd(1, ordering: .relaxed)
            refreshInstrumentation()
            // No L-g: a wake-up still pending here that another run wrote (a nested run, or an
            // earlier run that ended without waiting) is stale; this run ignored wake-ups from
            // its last wake until now (W3), so its own pending wake-up can only come from its
            // Entry observers, before its first wait, or from just now, and stays.
            if wakePending {
                lock.lock()
                if wakePending && guarded.wakeSerial != frame.serial {
                    // Dropped, with its note if it was noted. A written one leaves an event in
                    // the set (the descriptor is edge-triggered, nothing to read): the next wait
                    // takes it and drops it as stale.
                    _ = takeNotedWakeUpLocked(serial: frame.serial)
                    wakePending = false
                }
                lock.unlock()
            }

            notify(.beforeTimers, state, frame)                          // L-b: only a notification
            notify(.beforeSources, state, frame)
            switch firstBlocks {                                         // B3
            case .detached(let isCommon):
                firstBlocks = .notDetached
                if let isCommon { runDetachedBlocks(state, frame, isCommon: isCommon) }
            case .notDetached:
                doBlocks(state, frame)
            }
            var handled = doSources0(state, frame, stopAfterHandle: stopAfterHandle)  // S2
            if handled { doBlocks(state, frame) }                        // B3
            let poll = handled || deadline == 0                          // L-a

            var live = LivePort.none
            var timerNow: UInt64? = nil   // the clock reading that found a timer due, if any
            // The async queue fast path: work already waiting is serviced without
            // BW/AW, but never twice in a row.
            if asyncPort >= 0 && !didDispatchPortLastTime && asyncReadyNow() {
                live = .async
                lock.lock()
                frame.ignoreWakeUps = true
            } else {
                didDispatchPortLastTime = false
                if !poll { notify(.beforeWaiting, state, frame) }        // L-a
                lock.lock()
                let quiet = (poll || virtualClock != nil || wakeNoted.load(ordering: .relaxed))
                    && isQuietLocked(state, asyncPort: asyncPort)
                let batch = state.guarded.files.count > 1
                let armed = state.armedDeadline
                if poll && quiet {
                    // A quiet poll makes no system call: it is over within this critical
                    // section, so no other thread can tell it from no wait at all (W4), and the
                    // pass goes on to its exit checks without another lock round trip. It takes
                    // a wake-up noted on this thread, as a poll takes a written one.
                    if takeNotedWakeUpLocked(serial: frame.serial) == true { live = .wake }
                    if armed != .max {
                        let now = clockNanoseconds()
                        if armed <= now {
                            live = .timer
                            timerNow = now
                        }
                    }
                    frame.ignoreWakeUps = true                           // W3
                } else {
                    guarded.sleeping = true                                      // W4
                    if guarded.sleepWatchers > 0 { sleepStarted.broadcast() }   // see `waitUntilWaiting`
                    state.syncTimerFD()   // from now on `rearm` writes it as it changes (T3)
                    lock.unlock()
                    if !poll && hasSink { emit(.sleep, "", state.mode) }
                    var lockHeld = false
                    live = wait(state, poll: poll, until: deadline, asyncPort: asyncPort,
                                quiet: quiet, armed: armed, serial: frame.serial, batch: batch, frame: frame,
                                lockHeld: &lockHeld)
                    if !lockHeld { lockAfterWait() }
                    guarded.sleeping = false                                     // W4
                    frame.ignoreWakeUps = true                           // W3
                    if !poll && (hasSink || state.liveObserverMask.load(ordering: .relaxed)
                                    & Loop.Activity.afterWaiting.rawValue != 0) {
                        lock.unlock()
                        if hasSink { emit(.wake, "", state.mode) }
                        notify(.afterWaiting, state, frame)              // L-a
                        lock.lock()
                    }
                }
            }

            // HANDLE: exactly one cause per pass (L-c). Lock held.
            switch live {
            case .none, .wake:
                break
            case .failed:
                return .finished                                         // reported by `wait`
            case .timer:
                lock.unlock()
                doTimers(state, frame, now: timerNow)                    // L-b, T4; returns locked
            case .async:
                lock.unlock()
                drainAsyncQueue(state, frame)                            // X4
                lock.lock()
                handled = true                                           // L-d
                didDispatchPortLastTime = true
            case .source(let token, let ready):
                lock.unlock()
                handled = doSource1(token: token, ready: ready, state) || handled  // S8
                lock.lock()
            case .files:
                lock.unlock()
                handled = doReadyFileSources(state, frame) || handled            // S8 for fd sources
                lock.lock()
            }
            if !guarded.blocks.isEmpty {
                lock.unlock()
                doBlocks(state, frame)                                   // B3
                lock.lock()
            }

            // Exit checks in CF's order (L-e); emptiness only now (L-f).
            if handled && stopAfterHandle { return .handledSource }
            // A run without a timeout (`.max`) cannot time out, so it skips the clock read
            // (20–45 ns through the vDSO, once per pass).
            if deadline == 0 || (deadline != .max && deadline <= clockNanoseconds()) { return .timedOut }
            if consumeStop(state, frame) { return .stopped }
            if isEmptyLocked(state) { return .finished }
            // W3: wake-ups count again from the top of the next pass. The flag is cleared in
            // this critical section, not after it: a producer that queued work and saw the
            // flag still set (so wrote nothing) did so before this section, and the next
            // pass's look at the queues comes after it, so it finds that work (issue 26).
            frame.ignoreWakeUps = false
            lock.unlock()
        }
    }

    /// A pending stop of this run (`stop()`) or of its mode (sticky `stop(mode:)`, W2), cleared
    /// as it is taken. The run's own stop is checked first, as CF does. Lock held.
    @inline(__always)
    private func consumeStop(_ state: ModeState, _ frame: RunFrame) -> Bool {
        if frame.stopped {
            frame.stopped = false
            return true
        }
        if state.guarded.stopped {
            state.guarded.stopped = false
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

extension Loop.Mode {
    /// `self == .common`, answered at once for the default mode: both names have 21
    /// characters, so a plain comparison compares their bytes on every run of the default mode.
    @inline(__always)
    var isCommonModes: Bool { self != .default && self == .common }
}

/// The first pass's B3 step of a run: still to take the block queue, or already detached in
/// L1's critical section (`isCommon` nil: no block was queued).
private enum EarlyBlocks {
    case notDetached
    case detached(isCommon: Bool?)
}
