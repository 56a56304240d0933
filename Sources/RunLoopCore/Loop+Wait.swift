import RunLoopDiagnostics
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CRunLoopShims

/// What ended a wait (CF's `livePort`).
enum LivePort {
    case none
    case wake
    case timer
    case async
    case source(token: UInt64, ready: UInt32)
    /// Several fd sources are ready: the frame's `readyFiles` lists them (handled in one pass).
    case files
    /// The wait set failed (not EINTR): the mode cannot wait any more (see `ModeState.waitFailed`).
    case failed
}

extension Loop {
    /// The waiter: sleeps on the mode's epoll set until a port is ready, the mode's timer is
    /// due or the run's deadline passes, and reports ONE cause (L-c).
    ///
    /// - Real clock: one epoll wait with the run's remaining time as timeout; the mode's
    ///   timerfd (armed at its deadline, T3) is in the set, so timers added or moved by other
    ///   threads during the wait still wake it on time.
    /// - Virtual clock: poll the set with a zero timeout; if nothing is ready, jump the clock to
    ///   the earliest deadline (mode timer or run timeout); with no deadline at all, block on
    ///   the real descriptors (another thread's wake-up, port message, fd, or a timer added —
    ///   which pokes the mode's descriptor so the jump is recomputed).
    ///
    /// A due timer wins over other ready descriptors; those stay ready (level-triggered) for
    /// the next pass. Stale readiness (a timer descriptor whose deadline moved) is consumed here
    /// and never surfaces as a wake with nothing to do (no L-g).
    ///
    /// `quiet` (see `isQuietLocked`) and `armed` (the mode's timer deadline) were read by the
    /// caller under the lock when it set `sleeping`; `serial` identifies the waiting run.
    /// `batch` (several fd sources in the mode) lets one wait collect every ready fd source,
    /// handled together in this pass; ports, timers and wake-ups stay one cause per pass.
    /// Called without the lock; returns with it held when it sets `lockHeld` (a wake-up
    /// written by another thread), otherwise without it.
    func wait(_ state: ModeState, poll: Bool, until deadline: UInt64, asyncPort: Int32,
              quiet: Bool, armed: UInt64, serial: UInt64, batch: Bool, frame: RunFrame,
              lockHeld: inout Bool) -> LivePort {
        if wakeUpLost.load(ordering: .relaxed), takeLostWakeUp(serial: serial) { return .wake }
        // A wake-up noted on this thread (no eventfd written) ends the wait at once, as the
        // written one would, but after whatever descriptor is ready already: the set is polled
        // first unless it is quiet (its write would have come after them in the ready list).
        var notedWake = wakeNoted.load(ordering: .acquiring)
        if notedWake && quiet, let outcome = notedWakeOutcome(state, serial: serial) { return outcome }
        if quiet {
            // Nothing in the set can be ready: a poll, or a virtual wait with a deadline, needs
            // no system call.
            if isReached(armed) { return .timer }
            if poll { return .none }
            let target = min(armed, deadline)
            if let virtualClock, target != .max {
                virtualClock.advance(toNanoseconds: target)
                return timerDue(state) ? .timer : .none
            }
        }
        // L1: the async port is in the set exactly when this run services it
        // (`asyncPortForRun`), so the wait itself makes no epoll_ctl call.
        let tokens = frame.scratch.pointee.readyTokens
        let flags = frame.scratch.pointee.readyFlags
        let capacity = batch ? Int32(RunFrame.readyCapacity) : 1
        var blockOnDescriptors = false
        // Real clock: the wait also ends at the mode's timer deadline, so a timer is never lost
        // to a timerfd that could not be armed (its failure is reported); a moved deadline is
        // read again after an early wake.
        var timerDeadline = armed
        var firstWait = true
        while true {
            let timeout: Int64
            if poll || notedWake {
                timeout = 0
            } else if virtualClock != nil {
                timeout = blockOnDescriptors ? -1 : 0
            } else {
                if !firstWait { timerDeadline = lock.withLock { state.armedDeadline } }
                let until = min(deadline, timerDeadline)
                if until == .max {
                    timeout = -1
                } else {
                    let now = clock.nowNanoseconds
                    timeout = until > now ? Int64(clamping: until - now) : 0
                }
            }
            firstWait = false
            let count = rlk_epoll_wait_ns(state.epollFD, tokens, flags, capacity, timeout)  // retries EINTR
            if count < 0 {
                // Never a timeout: an error here (EBADF, EINVAL, EFAULT) would fail again on
                // every pass. The mode is marked failed, so this run and later ones finish.
                let failure = SystemCallError(call: "epoll_wait", code: errno)
                lock.withLock { state.guarded.waitFailed = true }
                Diagnostics.report(.error, .waitFailed,
                                   "the wait set of mode '\(state.mode)' failed: \(failure); the mode is treated as empty from now on")
                return .failed
            }
            if count > 1 && tokens[0] != WaitToken.wake { takeWakeUpAmongOthers(tokens, count: Int(count)) }
            if count > 1 && collectReadyFiles(state, count: Int(count), frame: frame) {
                if timerDue(state) {
                    frame.scratch.pointee.readyFiles.removeAll(keepingCapacity: true)
                    return .timer
                }
                return .files
            }
            if count > 0 {
                let token = tokens[0], ready = flags[0]
                switch token {
                case WaitToken.wake:
                    // The pass takes the lock right after the wait; this critical section is
                    // that one (one lock round trip per wake-up from another thread, not two).
                    lockAfterWait()
                    wakePending = false   // edge-triggered: taking the event is enough, nothing to read
                    // A wake-up decided for an earlier run whose write landed only now (see
                    // `wakeUp`) is stale: the earlier run would have dropped it (no L-g).
                    guard guarded.wakeSerial == serial else {
                        lock.unlock()
                        blockOnDescriptors = false  // a virtual deadline may have moved: recompute
                        continue
                    }
                    lockHeld = true
                    return isReached(state.armedDeadline) ? .timer : .wake
                case WaitToken.timer:
                    _ = drainCounter(state.timerFD, "the timer descriptor of mode '\(state.mode)'")  // a timerfd reads like an eventfd
                    if timerDue(state) { return .timer }
                    blockOnDescriptors = false  // stale, or a virtual deadline moved: recompute
                    continue
                case WaitToken.async:
                    if timerDue(state) { return .timer }
                    if isMainLoop {
                        owned.mainQueueMayBeReady = false   // a poke after this read reaches the watch
                        _ = drainCounter(asyncPort, "the main queue's descriptor")  // X1: acknowledge libdispatch's poke
                    }
                    return .async
                default:
                    if timerDue(state) { return .timer }
                    return .source(token: token, ready: ready)
                }
            }
            // Nothing was ready, the main queue's descriptor included when it is in the set.
            if isMainLoop && asyncPort >= 0 { owned.mainQueueMayBeReady = false }
            if notedWake {
                notedWake = false
                if let outcome = notedWakeOutcome(state, serial: serial) { return outcome }
                continue   // it was stale: wait as if it had not been noted
            }
            if timerDue(state) { return .timer }
            if poll { return .none }
            if let virtualClock {
                if blockOnDescriptors { continue }
                let target = min(lock.withLock { state.armedDeadline }, deadline)
                if target == .max {
                    blockOnDescriptors = true
                    continue
                }
                virtualClock.advance(toNanoseconds: target)
                return timerDue(state) ? .timer : .none
            }
            if clock.nowNanoseconds >= deadline { return .none }  // the run's timeout (X5)
            // woke early (EINTR, rounding): wait for the rest
        }
    }

    /// The wake-up descriptor is edge-triggered: an event of it that epoll has handed over is
    /// never reported again. A wait that takes it together with other events (room for several
    /// when the mode has several fd sources) ends with those, and the wake-up is taken with
    /// them: it asked for nothing more than the end of the wait. Left pending, it would keep a
    /// later wake-up on the loop's own thread from being noted, and the wait after that would
    /// sleep with the work that wake-up announced (issue 26).
    private func takeWakeUpAmongOthers(_ tokens: UnsafeMutablePointer<UInt64>, count: Int) {
        for index in 1..<count where tokens[index] == WaitToken.wake {
            lock.withLock { wakePending = false }
            return
        }
    }

    /// Puts the fd sources among the first `count` ready events into the frame's `readyFiles`,
    /// ordered by `order` (ties in readiness order); false when there are fewer than two. The
    /// other events stay ready (level-triggered) for the next pass.
    private func collectReadyFiles(_ state: ModeState, count: Int, frame: RunFrame) -> Bool {
        let tokens = frame.scratch.pointee.readyTokens
        let flags = frame.scratch.pointee.readyFlags
        lock.lock()
        for i in 0..<count {
            if let file = state.guarded.files[tokens[i]] { frame.scratch.pointee.readyFiles.append((file, flags[i])) }
        }
        lock.unlock()
        guard frame.scratch.pointee.readyFiles.count > 1 else {
            frame.scratch.pointee.readyFiles.removeAll(keepingCapacity: true)
            return false
        }
        // Insertion sort: stable (ties keep readiness order) and allocation-free for a handful.
        var i = 1
        while i < frame.scratch.pointee.readyFiles.count {
            var j = i
            while j > 0 && frame.scratch.pointee.readyFiles[j - 1].source.order > frame.scratch.pointee.readyFiles[j].source.order {
                frame.scratch.pointee.readyFiles.swapAt(j - 1, j)
                j -= 1
            }
            i += 1
        }
        return true
    }

    /// No port or fd source in the mode, no written wake-up pending (a noted one leaves the
    /// descriptor unread, see `decideWakeUpLocked`), no async work we could see (on
    /// `Loop.main`: no poke of the main queue, see `mainQueueIdle`). Lock held.
    func isQuietLocked(_ state: ModeState, asyncPort: Int32) -> Bool {
        // The main queue first, so that the watch's completions are consumed on every pass.
        let asyncQuiet = asyncPort < 0 || (isMainLoop ? mainQueueIdle() : guarded.asyncPending.isEmpty)
        return asyncQuiet && (!wakePending || wakeNoted.load(ordering: .relaxed))
            && state.guarded.ports.isEmpty && state.guarded.files.isEmpty
    }

    /// The end of a wait: the instrumentation is picked up first (a sink set while the loop
    /// slept sees what woke it), then the lock is taken for the pass's post-wait steps.
    @inline(__always)
    func lockAfterWait() {
        refreshInstrumentation()
        lock.lock()
    }

    /// What a noted wake-up ends the wait with (taking it): `.wake`, or `.timer` when the
    /// mode's timer is due (as for a written wake-up); nil when none is noted or it is stale.
    private func notedWakeOutcome(_ state: ModeState, serial: UInt64) -> LivePort? {
        guard takeNotedWakeUp(serial: serial) == true else { return nil }
        return timerDue(state) ? .timer : .wake
    }

    @inline(__always)
    func timerDue(_ state: ModeState) -> Bool {
        isReached(lock.withLock { state.armedDeadline })
    }

    /// Whether the clock has reached `deadline` (`.max`: never, and no clock read).
    @inline(__always)
    func isReached(_ deadline: UInt64) -> Bool {
        deadline != .max && deadline <= clock.nowNanoseconds
    }
}
