import RunLoopDiagnostics
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CRunLoopShims

extension Loop {
    /// The waiter (CF's `__CFRunLoopServiceMachPort` on Linux's epoll): sleeps on the mode's
    /// wait set until something in it is ready, the mode's timer is due or the run's deadline
    /// passes, and reports ONE cause (L-c), in an `UnderLock` that hands the lock's `Held` token to
    /// the pass's next step.
    ///
    /// - Real clock: one `epoll_wait` with the run's remaining time as its timeout; the mode's
    ///   timerfd (armed at its deadline, T3) is in the set, so timers added or moved by other
    ///   threads during the wait wake it on time.
    /// - Virtual clock: poll the set; if nothing is ready, jump the clock to the earliest
    ///   deadline (the mode's timer or the run's timeout); with no deadline at all, block on
    ///   the real descriptors (another thread's wake-up, a port message, an fd, or a timer
    ///   added, which pokes the mode's timer descriptor so the jump is computed again).
    ///
    /// A due timer wins over other ready descriptors, which stay ready (level-triggered) for
    /// the next pass. Stale readiness (a timer descriptor whose deadline moved, a wake-up for
    /// an earlier run) is consumed here and never surfaces as a wake with nothing to do (L-g).
    func wait(_ run: RunContext, _ plan: WaitPlan) -> UnderLock<Cause> {
        let serial = run.serial
        if takeLostWakeUp(for: serial) { return finishWait(.wake) }
        // A wake-up noted on this thread (nothing written) ends the wait at once, as a written
        // one would, but after whatever descriptor is ready already: the set is polled first
        // unless it is quiet (a written wake-up's event would come after those in the list).
        var notedWake = wakeUpFlags.isNoted
        if notedWake && plan.quiet, let outcome = takeNotedWakeUpEndingWait(run, serial) { return outcome }
        if plan.quiet {
            // Nothing in the set can be ready: a poll, or a virtual wait with a deadline, needs
            // no system call.
            if isReached(plan.armed) { return finishWait(.timer) }
            if plan.poll { return finishWait(.none) }
            let target = run.deadline.earlier(thanTimer: plan.armed)
            if let virtualClock, target != .max {
                virtualClock.advance(toNanoseconds: target)
                return finishWaitCheckingTimer(run, otherwise: .none)
            }
        }
        let tokens = run.frame.scratch.pointee.readyTokens
        let flags = run.frame.scratch.pointee.readyFlags
        let capacity = plan.batch ? Int32(RunFrame.readyCapacity) : 1
        var blockOnDescriptors = false
        // Real clock: the wait also ends at the mode's timer deadline, so a timer is never lost
        // to a timerfd that could not be armed (its failure is reported); a moved deadline is
        // read again after an early wake.
        var timerDeadline = plan.armed
        var firstWait = true
        var lostWakeUpCheck = LostWakeUpCheck()
        while true {
            var timeout: Int64
            if plan.poll || notedWake {
                timeout = 0
            } else if virtualClock != nil {
                timeout = blockOnDescriptors ? -1 : 0
            } else {
                if !firstWait { timerDeadline = lock.withLock { run.mode.armedDeadline($0) } }
                let until = run.deadline.earlier(thanTimer: timerDeadline)
                if until == .max {
                    timeout = -1
                } else {
                    let now = clock.nowNanoseconds
                    timeout = until > now ? Int64(clamping: until - now) : 0
                }
            }
            firstWait = false
            timeout = lostWakeUpCheck.bounded(timeout)
            let count = rlk_epoll_wait_ns(run.mode.epollFD.raw, tokens, flags, capacity, timeout)  // retries EINTR
            lostWakeUpCheck.waitEnded(readyCount: count)
            if count < 0 {
                // Never a timeout: an error here (EBADF, EINVAL, EFAULT) would fail again on
                // every pass. The mode is marked failed, so this run and later ones finish.
                let failure = SystemCallError(call: "epoll_wait", code: errno)
                Diagnostics.report(.error, .waitFailed,
                                   "the wait set of mode '\(run.mode.mode)' failed: \(failure); the mode is treated as empty from now on")
                let held = lockAfterWait()
                held[run.mode].waitFailed = true
                return UnderLock(held: held, value: Cause(.failed))
            }
            if count > 1 && tokens[0] != WaitToken.wake { takeWakeUpAmongOthers(tokens, count: Int(count)) }
            if count > 1 && collectReadyFiles(run, count: Int(count)) {
                return finishWaitCheckingTimer(run, otherwise: .files) { run.frame.scratch.pointee.readyFiles.removeAll(keepingCapacity: true) }
            }
            if count > 0 {
                let token = tokens[0], ready = flags[0]
                switch token {
                case WaitToken.wake:
                    // The pass takes the lock right after the wait: this critical section is
                    // that one (one lock round trip per wake-up from another thread, not two).
                    let held = lockAfterWait()
                    if takeWakeUpEvent(for: serial, held) {
                        let live: LivePort = isReached(run.mode.armedDeadline(held)) ? .timer : .wake
                        return UnderLock(held: held, value: Cause(live))
                    }
                    // For an earlier run, written late: that run would have dropped it (L-g).
                    held.unlock()
                    blockOnDescriptors = false   // a virtual deadline may have moved: compute again
                    continue
                case WaitToken.timer:
                    drainCounter(run.mode.timerFD.raw, "the timer descriptor of mode '\(run.mode.mode)'").reported()  // a timerfd reads like an eventfd
                    if let due = finishWaitIfTimerDue(run) { return due }
                    blockOnDescriptors = false   // stale, or a virtual deadline moved: compute again
                    continue
                case WaitToken.async:
                    if let due = finishWaitIfTimerDue(run) { return due }
                    if isMainLoop, let port = run.asyncPort {
                        owned.mainQueueMayBeReady = false   // a poke after this read reaches the watch
                        drainCounter(port.raw, "the main queue's descriptor").reported()  // X1: read libdispatch's eventfd, acknowledging its poke of the main queue
                    }
                    return finishWait(.async)
                default:
                    return finishWaitCheckingTimer(run, otherwise: .source(token: token, ready: ready))
                }
            }
            // Nothing was ready, the main queue's descriptor included when it is in the set.
            if isMainLoop && run.asyncPort != nil { owned.mainQueueMayBeReady = false }
            if notedWake {
                notedWake = false
                if let outcome = takeNotedWakeUpEndingWait(run, serial) { return outcome }
                continue   // it was stale: wait as if it had not been noted
            }
            if let due = finishWaitIfTimerDue(run) { return due }
            if plan.poll { return finishWait(.none) }
            if lostWakeUpCheck.boundPassed, let found = lostWakeUpFound(run) { return found }
            if let virtualClock {
                if blockOnDescriptors { continue }
                let target = run.deadline.earlier(thanTimer: lock.withLock { run.mode.armedDeadline($0) })
                if target == .max {
                    blockOnDescriptors = true
                    continue
                }
                virtualClock.advance(toNanoseconds: target)
                return finishWaitCheckingTimer(run, otherwise: .none)
            }
            if run.deadline.isReached(on: self) { return finishWait(.none) }  // the run's timeout has passed (X5: the waiter's own timeout)
            // woke early (EINTR, rounding, the lost-wake-up check's bound): wait for the rest
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
            lock.withLock { _ = takeWakeUpEvent(for: 0, $0) }
            return
        }
    }

    /// Puts the fd sources among the first `count` ready events into the frame's `readyFiles`,
    /// ordered by `order` (ties in readiness order); false when there are fewer than two. The
    /// other events stay ready (level-triggered) for the next pass.
    private func collectReadyFiles(_ run: RunContext, count: Int) -> Bool {
        let scratch = run.frame.scratch
        let tokens = scratch.pointee.readyTokens
        let flags = scratch.pointee.readyFlags
        lock.withLock { held in
            for i in 0..<count {
                if let file = held[run.mode].files[tokens[i]] { scratch.pointee.readyFiles.append((file, flags[i])) }
            }
        }
        guard scratch.pointee.readyFiles.count > 1 else {
            scratch.pointee.readyFiles.removeAll(keepingCapacity: true)
            return false
        }
        // Insertion sort: stable (ties keep readiness order) and allocation-free for a handful.
        var i = 1
        while i < scratch.pointee.readyFiles.count {
            var j = i
            while j > 0 && scratch.pointee.readyFiles[j - 1].source.order > scratch.pointee.readyFiles[j].source.order {
                scratch.pointee.readyFiles.swapAt(j - 1, j)
                j -= 1
            }
            i += 1
        }
        return true
    }

    /// The end of a wait: the instrumentation is picked up first (a sink set while the loop
    /// slept sees what woke it), then the lock is taken for the pass's next step.
    @inline(__always)
    func lockAfterWait() -> LoopLock.Held {
        refreshInstrumentation()
        return lock.lock()
    }

    /// Ends the wait with `live`.
    @inline(__always)
    private func finishWait(_ live: LivePort) -> UnderLock<Cause> {
        UnderLock(held: lockAfterWait(), value: Cause(live))
    }

    /// Ends the wait with `.timer` when the mode's timer is due, else with `otherwise` (after
    /// `discarding` what `otherwise` would have handed over).
    @inline(__always)
    private func finishWaitCheckingTimer(_ run: RunContext, otherwise live: LivePort,
                                         discarding: () -> Void = {}) -> UnderLock<Cause> {
        let held = lockAfterWait()
        if isReached(run.mode.armedDeadline(held)) {
            discarding()
            return UnderLock(held: held, value: Cause(.timer))
        }
        return UnderLock(held: held, value: Cause(live))
    }

    /// Ends the wait with `.timer` if the mode's timer is due; nil (lock released) otherwise.
    @inline(__always)
    private func finishWaitIfTimerDue(_ run: RunContext) -> UnderLock<Cause>? {
        let held = lockAfterWait()
        guard isReached(run.mode.armedDeadline(held)) else {
            held.unlock()
            return nil
        }
        return UnderLock(held: held, value: Cause(.timer))
    }

    /// A noted wake-up ends the wait (taking it): `.wake`, or `.timer` when the mode's timer is
    /// due (as for a written wake-up); nil when none is noted or it is stale.
    private func takeNotedWakeUpEndingWait(_ run: RunContext, _ serial: UInt64) -> UnderLock<Cause>? {
        let held = lockAfterWait()
        guard takeNotedWakeUp(for: serial, held) == true else {
            held.unlock()
            return nil
        }
        let live: LivePort = isReached(run.mode.armedDeadline(held)) ? .timer : .wake
        return UnderLock(held: held, value: Cause(live))
    }

    /// Whether the clock has reached `deadline` (`.max`: never, and no clock read).
    @inline(__always)
    func isReached(_ deadline: UInt64) -> Bool {
        deadline != .max && deadline <= clock.nowNanoseconds
    }
}
