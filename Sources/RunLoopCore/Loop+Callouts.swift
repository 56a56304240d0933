import CRunLoopShims
import PThreads

// The "Do" steps of a pass: observers (O4), sources0 (S2), one port event (S8), timers (T4, T5),
// plus the callout wrapper that feeds the event sink and interceptor.

extension Loop {
    // MARK: Events and callouts

    @inline(__always)
    func emit(_ kind: LoopEvent.Kind, _ label: String, _ mode: Loop.Mode) {
        if let sink = owned.activeSink {
            sink.loop(self, emitted: LoopEvent(kind: kind, label: label, mode: mode,
                                               pass: passCount, time: clock.now))
        }
    }

    /// Whether an event sink is installed (test it before building an event's arguments).
    @inline(__always)
    var hasSink: Bool { owned.activeSink != nil }

    /// Every callout goes through here (lock released): begin event, `willCallOut`, the item's
    /// code, `didCallOut`, end event. The interceptor runs INSIDE the callout's span, so work it
    /// does at the end of a callout (a flush-if-too-late commit, a per-callout pool pop) shows up
    /// in traces within that callout, as UIKit's flush does inside `__handleEventQueue`.
    /// The label is read only when something is installed: a copy of it read from a queue's
    /// storage is a retain and a release.
    @inline(__always)
    func callOut(_ kind: LoopEvent.Callout, _ label: @autoclosure () -> String, _ mode: Loop.Mode,
                 _ body: () -> Void) {
        // The common case, nothing installed: no existential is loaded or retained.
        guard owned.wrapsCallouts else {
            body()
            return
        }
        let label = label()
        let interceptor = owned.activeInterceptor
        emit(.calloutBegin(kind), label, mode)
        interceptor?.willCallOut(kind, label: label, loop: self)
        body()
        interceptor?.didCallOut(kind, label: label, loop: self)
        emit(.calloutEnd(kind), label, mode)
    }

    // Named frames, like CF's `__CFRUNLOOP_IS_CALLING_OUT_TO_…__` (A1), so backtraces show
    // which kind of callout is running.

    @inline(never)
    func __RLK_IS_CALLING_OUT_TO_AN_OBSERVER__(_ observer: LoopObserver, _ activity: Loop.Activity) {
        observer.callout(observer, activity)
    }

    /// Runs the block in `slot`, whose work it takes (the block stays, `.taken`, until its
    /// queue drops it).
    @inline(never)
    func callOutToBlock(in slot: UnsafeMutablePointer<PendingBlock>, _ mode: Loop.Mode) {
        switch slot.pointee.takeWork() {
        case .closure(let work):
            callOut(.block, slot.pointee.label, mode) { __RLK_IS_CALLING_OUT_TO_A_BLOCK__(work) }
        case .job(let job):
            callOut(.job, slot.pointee.label, mode) { __RLK_IS_CALLING_OUT_TO_A_JOB__(job) }
        case .taskJob(let job):
            callOut(.job, slot.pointee.label, mode) { __RLK_IS_CALLING_OUT_TO_A_TASK_JOB__(job) }
        case .taken:
            preconditionFailure("a block's work was called out twice")
        }
    }

    @inline(never)
    func __RLK_IS_CALLING_OUT_TO_A_BLOCK__(_ work: @Sendable () -> Void) { work() }

    @inline(never)
    func __RLK_IS_CALLING_OUT_TO_A_JOB__(_ job: UnownedJob) {
        // Isolated to the loop only: also handing the runtime the loop as the current task
        // executor made a task without that preference hop once more before its code ran.
        job.runSynchronously(on: asUnownedSerialExecutor())
    }

    @inline(never)
    func __RLK_IS_CALLING_OUT_TO_A_TASK_JOB__(_ job: UnownedJob) {
        job.runSynchronously(on: asUnownedTaskExecutor())
    }

    @inline(never)
    func __RLK_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM__(_ source: LoopSource) { source.perform() }

    @inline(never)
    func __RLK_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM__(_ port: LoopPortSource, _ message: LoopPortSource.Message) {
        port.handler(message)
    }

    @inline(never)
    func __RLK_IS_CALLING_OUT_TO_AN_FD_SOURCE__(_ source: LoopFileSource, _ events: LoopFileSource.Events) {
        source.handler(events)
    }

    @inline(never)
    func __RLK_IS_CALLING_OUT_TO_A_TIMER__(_ timer: LoopTimer) { timer.callout(timer) }

    @inline(never)
    func callOutToMainQueue(_ mode: Loop.Mode) {
        callOut(.mainQueue, "mainQueue", mode) { __RLK_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE__() }
    }

    @inline(never)
    func __RLK_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE__() { rlk_dispatch_main_queue_drain() }

    // MARK: Observers: each activity's observers, called from the run's snapshot (O4, O5)

    /// Notifies `activity` (a single bit): calls the valid, non-firing observers of it from the
    /// run's snapshot, in order, when the mode holds any. O3: an activity that an observer of
    /// the mode asked for once is still reported to an event sink after the observer left, as
    /// CF still calls `__CFRunLoopDoObservers` with nobody to call.
    @inline(__always)
    func notify(_ activity: Loop.Activity, _ run: RunContext) {
        if run.mode.liveObserverMask.load(ordering: .relaxed) & activity.rawValue != 0 {
            doObservers(activity, run)
        } else if run.mode.observerMask.load(ordering: .relaxed) & activity.rawValue != 0 && hasSink {
            emit(.activity(activity), activity.shortName, run.mode.mode)
        }
    }

    func doObservers(_ activity: Loop.Activity, _ run: RunContext) {
        let state = run.mode
        let scratch = run.frame.scratch
        // O4: the run holds a snapshot of the mode's observers, taken under the lock when the
        // run started and again only when the mode's observers changed since. An observer
        // removed by an earlier callout is still called (O5): the held snapshot keeps it
        // alive. A change another thread makes meanwhile counts as made after this
        // notification.
        if state.observersVersion.load(ordering: .acquiring) != scratch.pointee.observersHeldVersion {
            refreshObserverSnapshot(run)
        }
        guard let entries = scratch.pointee.observerEntries else {
            if hasSink { emitActivity(activity, state) }
            return
        }
        // The observers of this activity only, in order, unretained (the snapshot is held).
        // CF collects the valid, non-firing ones first and calls them after; testing both at
        // each call is the same: invalidation is final, and an observer that a callout of
        // this notification makes fire has stopped firing when that callout returns.
        assert(activity.rawValue & ObserverSnapshot.notified != 0 && activity.rawValue.nonzeroBitCount == 1,
               "notify takes one of the six notified activities")
        let starts = scratch.pointee.observerStarts.unsafelyUnwrapped
        let slot = activity.rawValue.trailingZeroBitCount
        var index = starts[slot]
        let end = starts[slot + 1]
        // The sink and interceptor change only between passes (`refreshInstrumentation`), so
        // one test serves the whole notification. With neither, the loop below calls the
        // observers directly; the wrapped calls, the events and the snapshot refresh are out of
        // line, which keeps this function's frame small (fewer registers saved and reloaded
        // per observer).
        if owned.wrapsCallouts {
            doObserversWrapped(activity, state, entries: entries, from: index, to: end)
            return
        }
        while index < end {
            entries[index]._withUnsafeGuaranteedRef { observer in
                fireObserver(observer) { __RLK_IS_CALLING_OUT_TO_AN_OBSERVER__(observer, activity) }
            }
            index += 1
        }
    }

    /// O4 steps 1–5 for one observer of the snapshot; `call` makes the callout.
    @inline(__always)
    private func fireObserver(_ observer: LoopObserver, _ call: () -> Void) {
        // Invalidated (maybe by an earlier callout, O5), or firing in an outer run (O5).
        guard observer.core.isValid, !observer.firing.load(ordering: .relaxed) else { return }
        observer.firing.store(true, ordering: .relaxed)
        call()
        if !observer.repeats { invalidateOneShot(observer) }  // O5: a one-shot observer fires once
        observer.firing.store(false, ordering: .relaxed)
    }

    /// O5's invalidation of a one-shot observer that fired. Out of line: the optimiser may
    /// inline `invalidate()` (the whole purge of the observer from its loop) into the loop over
    /// the observers, which then saves and reloads more registers per observer (callgrind: 52
    /// instructions a pass with 8 observers of every activity).
    @inline(never)
    private func invalidateOneShot(_ observer: LoopObserver) { observer.invalidate() }

    /// Takes the mode's current observer snapshot; the one replaced is released after the lock.
    @inline(never)
    private func refreshObserverSnapshot(_ run: RunContext) {
        let previous = lock.withLock { run.frame.replaceObserverSnapshot(run.mode, $0) }
        withExtendedLifetime(previous) {}
    }

    @inline(never)
    private func emitActivity(_ activity: Loop.Activity, _ state: ModeState) {
        emit(.activity(activity), activity.shortName, state.mode)
    }

    /// `doObservers` with an event sink or an interceptor installed: the activity's event, then
    /// each observer's callout inside `callOut`.
    @inline(never)
    private func doObserversWrapped(_ activity: Loop.Activity, _ state: ModeState,
                                    entries: UnsafeMutablePointer<Unmanaged<LoopObserver>>, from start: Int, to end: Int) {
        if hasSink { emit(.activity(activity), activity.shortName, state.mode) }
        var index = start
        while index < end {
            entries[index]._withUnsafeGuaranteedRef { observer in
                fireObserver(observer) {
                    callOut(.observer, observer.label, state.mode) { __RLK_IS_CALLING_OUT_TO_AN_OBSERVER__(observer, activity) }
                }
            }
            index += 1
        }
    }

    // MARK: Sources0: the signalled ones, in order; any perform counts as handled (S2, S4)

    /// Performs the signalled sources in (order, signal stamp) order; with `stopAfterHandle`
    /// only the first. Returns whether any was performed — ORed as Darwin's CF-1153 does, not the Linux CF's
    /// last-one-wins (S4).
    func doSources0(_ run: RunContext) -> Bool {
        let state = run.mode, frame = run.frame, stopAfterHandle = run.returnAfterSourceHandled
        // Only the sources signalled for this mode are looked at (see `Source0Registration`);
        // one signalled by another thread meanwhile is as if signalled after this step.
        guard state.hasSignalled.load(ordering: .acquiring) else { return false }
        state.takeSignalled(into: &frame.scratch.pointee.sources)
        if frame.scratch.pointee.sources.isEmpty { return false }
        // The usual single pick needs no sort, and no call to learn that.
        if frame.scratch.pointee.sources.count > 1 { sortPicks(&frame.scratch.pointee.sources) }

        var handled = false
        var index = 0
        while index < frame.scratch.pointee.sources.count {
            // Lent, not retained: the frame's list holds the source until the truncate below,
            // and a nested run has a frame of its own.
            let source = Unmanaged.passUnretained(frame.scratch.pointee.sources[index].source)
            index += 1
            // S2: still signalled? clear before the perform; perform only if still valid.
            let performs = source._withUnsafeGuaranteedRef { source in
                source.signalStamp.exchange(0, ordering: .acquiringAndReleasing) != 0 && source.core.isValid
            }
            guard performs else { continue }
            if !handled {
                handled = true  // S4: one performed source makes the pass handled; never reset
                run.frame.markPollingPass()
            }
            source._withUnsafeGuaranteedRef { source in
                callOut(.source0, source.label, state.mode) { __RLK_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM__(source) }
            }
            if stopAfterHandle { break }
        }
        frame.scratch.pointee.sources.truncate(to: 0)
        return handled
    }

    /// Insertion sort of two or more picks by (order, stamp): stable, in place, allocation-free
    /// for the usual few.
    private func sortPicks(_ picks: inout [Source0Pick]) {
        for i in 1..<picks.count {
            let pick = picks[i]
            var j = i
            while j > 0 && (picks[j - 1].order, picks[j - 1].stamp) > (pick.order, pick.stamp) {
                picks[j] = picks[j - 1]
                j -= 1
            }
            picks[j] = pick
        }
    }

    // MARK: Source1: one port or fd event (S8, L-c)

    /// Handles the port or fd source behind `token`; returns whether it counts as handled.
    func doSource1(token: UInt64, ready: UInt32, _ run: RunContext) -> Bool {
        let state = run.mode
        let (port, file) = lock.withLock { held -> (LoopPortSource?, LoopFileSource?) in
            let port = held[state].ports[token]
            return (port, port == nil ? held[state].files[token] : nil)
        }
        if let port {
            // One port event per pass (L-c); it hands over up to `messagesPerPass` messages.
            var delivered = 0
            while delivered < port.messagesPerPass, let message = port.takeOne() {
                callOut(.source1, port.label, state.mode) { __RLK_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM__(port, message) }
                delivered += 1
            }
            if delivered == 0 { port.dropStaleReadiness() }
            return delivered > 0
        }
        if let file, file.isValid {
            callOutToFileSource(file, ready: ready, state)
            return true
        }
        // CF logs "…returned NULL…" here; a port removed during the wait is simply skipped.
        return false
    }

    /// Every fd source a batched wait found ready (see `wait(…batch:)`), in `order`: a busy
    /// descriptor cannot starve the others, each gets one callout per pass.
    func doReadyFileSources(_ run: RunContext) -> Bool {
        let state = run.mode, frame = run.frame
        var handled = false
        var index = 0
        while index < frame.scratch.pointee.readyFiles.count {
            let (file, ready) = frame.scratch.pointee.readyFiles[index]
            index += 1
            // A source removed or invalidated by an earlier callout of this pass is skipped.
            guard file.isValid, lock.withLock({ file.isHeld(by: state, $0) }) else { continue }
            callOutToFileSource(file, ready: ready, state)
            handled = true
        }
        frame.scratch.pointee.readyFiles.removeAll(keepingCapacity: true)
        return handled
    }

    /// Level-triggered: hands the source what is ready and asked for, plus hang-up and error
    /// always (`LoopFileSource.Events`).
    private func callOutToFileSource(_ file: LoopFileSource, ready: UInt32, _ state: ModeState) {
        let events = LoopFileSource.Events(rawValue: ready & (file.interestBitsNow | 12))
        callOut(.fileSource, file.label, state.mode) { __RLK_IS_CALLING_OUT_TO_AN_FD_SOURCE__(file, events) }
    }

    // MARK: Timers: every due timer in one pass, each re-armed on its grid (T4, T5)

    /// Fires every valid, non-firing timer due now, in fire-date order (T4). `known` is the
    /// time the pass has just read to find a timer due, used instead of reading the clock
    /// again. Takes the lock from the wait's critical section and returns it held, for the
    /// pass's exit checks: a timer pass takes the lock once, before its callouts, and once
    /// after each.
    func doTimers(_ run: RunContext, time known: TimerPassTime?, _ held: consuming LoopLock.Held) -> LoopLock.Held {
        let state = run.mode, frame = run.frame
        var time = known ?? readTimerPassTime()
        // The lock passes from timer to timer: each callout releases it and takes it again.
        var held = held
        let beyond = held[state].timers.collectDue(now: time.reading, into: &frame.scratch.pointee.timers)
        if !time.decides(beyond) {
            // A timer dated just after the coarse reading might be due: collect by the exact time.
            frame.scratch.pointee.timers.truncate(to: 0)
            time = readTimerPassTime()
            held[state].timers.collectDue(now: time.reading, into: &frame.scratch.pointee.timers)
        }
        // The due list borrows its timers from the mode's queue until the end of this pass;
        // a timer the queue drops meanwhile is parked in the mode (`ModeItem.erase`).
        held[state].timerPasses += 1
        var fired = false
        var index = 0
        while index < frame.scratch.pointee.timers.count {
            // The frame's list is this pass's alone: a nested run has a frame of its own.
            let timer = frame.scratch.pointee.timers[index].timer
            index += 1
            timer._withUnsafeGuaranteedRef { timer in
                if doTimer(timer, state, time: &time, &held) { fired = true }
            }
        }
        frame.scratch.pointee.timers.truncate(to: 0)
        held[state].timerPasses -= 1
        if held[state].timerPasses == 0 && !held[state].parkedTimers.isEmpty {
            held = releaseParkedTimers(state, held)
        }
        // A fired timer re-armed its modes as it moved or left; otherwise re-arm here.
        if !fired { state.rearm(waiting: false, held) }
        return held
    }

    /// Lets go of the timers the mode dropped while its passes borrowed them, after the lock: a
    /// last release runs the timer's deinit and its callout's captures' (user code). Returns
    /// the lock taken again. Out of line: only a pass whose callouts removed a timer gets here.
    @inline(never)
    private func releaseParkedTimers(_ state: ModeState, _ held: consuming LoopLock.Held) -> LoopLock.Held {
        var parked: [LoopTimer] = []
        swap(&parked, &held[state].parkedTimers)   // moved out: no copy of the list
        held.unlock()
        withExtendedLifetime(parked) {}
        return lock.lock()
    }

    /// T5: fire one timer, then invalidate it (one-shot), keep a date set in the callout, or
    /// advance it on its original grid past `now`, skipping missed ticks. Returns whether it
    /// fired. The callout runs without the lock: `held` is given up before it and holds the
    /// lock taken again after it.
    private func doTimer(_ timer: LoopTimer, _ state: ModeState, time: inout TimerPassTime,
                         _ held: inout LoopLock.Held) -> Bool {
        // The loop's lock alone (it owns the timer's schedule): one critical section checks the
        // timer, marks it firing and re-arms its modes without it (T5.2).
        guard let started = startFiring(timer, time: &time, held) else { return false }
        held.unlock()
        callOut(.timer, timer.label, state.mode) { __RLK_IS_CALLING_OUT_TO_A_TIMER__(timer) }
        if started.oneShot { timer.invalidate() }
        // Catch-up coalescing on the original grid (T5.6), from the time after the callout
        // read only as precisely as can change the date (`nextGridDate`); before the lock.
        let next = started.oneShot ? nil : nextGridDate(timer, lastDue: started.old, firedAt: time.reading)
        held = lock.lock()
        timer.firing = false
        if timer.isScheduled(in: self, held) {
            // Still in this loop's modes: the loop's lock alone, as before the callout.
            if timer.core.isValid {
                finishFiring(timer, next: next)
                reposition(timer, waiting: false, held)   // the loop's own thread, in its pass: not waiting
            }
        } else {
            // The callout took it out of this loop's modes: the timer's lock owns its schedule.
            timer.core.lock.withLock {
                if timer.core.valid { finishFiring(timer, next: next) }
            }
        }
        return true
    }

    /// T5 after the callout, as the owner of the timer's schedule: a date set in the callout
    /// stands; otherwise `next`, the grid date after the callout (nil only when the callout had
    /// set a date before `nextGridDate` looked, which then still stands).
    @inline(__always)
    private func finishFiring(_ timer: LoopTimer, next: UInt64?) {
        if !timer.rescheduledInCallout, let next { timer.setFireDate(next) }
        timer.rescheduledInCallout = false
    }

    /// T5.2, with the loop's lock held (enough: the timer comes from this loop's queue, so the
    /// loop owns its schedule, the lock rule in `LoopTimer`): a timer that is valid, due and not
    /// firing is marked firing, and its modes re-arm without it; its date and whether it is
    /// one-shot.
    /// Nil when it does not fire (left this loop's modes, invalid, not due, firing in an outer
    /// run).
    @inline(__always)
    private func startFiring(_ timer: LoopTimer, time: inout TimerPassTime,
                             _ held: borrowing LoopLock.Held) -> (old: UInt64, oneShot: Bool)? {
        // An earlier callout of this pass may have moved the date past the reading: `isDue`
        // then reads the clock again, as CF does for each timer.
        guard timer.core.isValid, !timer.firing,
              time.isDue(timer.fireDate, readExact: { readTimerPassTime().reading }) else { return nil }
        timer.firing = true
        let inThisLoop = timer.forEachSlotLocked(ofLoop: identity) { slot in
            slot.mode._withUnsafeGuaranteedRef { $0.rearm(waiting: false, held) }
        }
        guard inThisLoop else {
            timer.firing = false   // not in this loop's modes any more: nothing to fire
            return nil
        }
        timer.rescheduledInCallout = false
        return (timer.fireDate, timer.intervalNs == 0)
    }
}
