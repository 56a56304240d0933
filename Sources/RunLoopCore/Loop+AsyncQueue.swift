import RunLoopDiagnostics
import CRunLoopShims
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The async queue (R4a, L1, X4): on `Loop.main` the main dispatch queue, which CF drains from
// its run loop; on every other loop a FIFO of its own with an eventfd, serviced the same way.

extension Loop {
    /// Runs `work` on this loop's thread, with the main dispatch queue's semantics.
    ///
    /// On the main thread's loop this is `DispatchQueue.main.async` (so `@MainActor` work and
    /// other main-queue users share the queue), drained by the loop as CF does (R4a, X4). On any
    /// other loop it is a per-loop FIFO with an eventfd, serviced the same way: only while the
    /// loop runs one of its common modes, at most one drain per pass, a snapshot per drain, and
    /// the fast path that skips BW/AW when work is already waiting.
    ///
    /// ```swift
    /// worker.submit(label: "reply") { print("on the worker's loop") }
    /// ```
    ///
    /// - Returns: false, with a diagnostic, when the loop's thread has exited: the work will
    ///   never run.
    @discardableResult
    public func submit(label: String = "mainQueue", _ work: @escaping @Sendable () -> Void) -> Bool {
        if isMainLoop {
            DispatchQueue.main.async(execute: work)
            return true
        }
        let (accepted, signalled) = lock.withLock { held -> (Bool, Result<Int32, SystemCallError>) in
            guard !held.loop.tornDown, let descriptor = held.loop.asyncFD else { return (false, .success(0)) }
            guard appendAsyncWork(AsyncWork(label: label, work: work), held) else { return (true, .success(0)) }
            // The queue became non-empty: make its descriptor readable. Under the lock, so
            // teardown cannot close the descriptor in between.
            return (true, valueOrErrno("write(eventfd)") { rlk_eventfd_signal(descriptor.raw) })
        }
        signalled.reportingFailure(.systemCallFailed, "waking the loop for submitted work", item: label)
        if !accepted {
            Diagnostics.report(.error, .workAfterTeardown,
                               "work '\(label)' was submitted to a loop whose thread has exited; it will not run",
                               item: label)
        }
        return accepted
    }

    /// L1: the descriptor the async queue signals if this run services it, else nil. Loop
    /// thread, at the start of a run (after L0).
    ///
    /// CF adds the main-queue port to the mode's port set before each wait and removes it after
    /// (two `epoll_ctl` calls per wake). Here the descriptor stays in the set of every mode that
    /// has been run as a common mode, which gives the same waits: a run that services the queue
    /// finds it there, and a run that must not (a nested run inside the queue's own drain, R4a)
    /// takes it out for its duration and `restoreAsyncPort` puts it back when it ends. Leaving
    /// a readable descriptor in the set of such a run instead would make every wait return at
    /// once (level-triggered) and the run spin.
    @inline(__always)
    func asyncPortForRun(_ run: RunContext, _ held: borrowing LoopLock.Held) -> Descriptor? {
        let port = isMainLoop ? mainQueuePortForRun(run.mode, held)
                              : (asyncClauseActive(run.mode, held) ? held.loop.asyncFD : nil)
        // The set usually agrees already (the descriptor stays in it between runs), so only
        // this check is inlined into the run; a call on every run cost about 20 instructions.
        if (port != nil) != (held[run.mode].asyncInSet != nil) { updateAsyncPortInSet(port, run, held) }
        return port
    }

    /// The main queue's descriptor when this run services the main queue, else nil; the
    /// descriptor is made on the first such run (which finds it in no wait set yet, so
    /// `updateAsyncPortInSet` follows and reports what `watchMainQueue` deferred).
    private func mainQueuePortForRun(_ state: ModeState, _ held: borrowing LoopLock.Held) -> Descriptor? {
        guard mainQueueClause(state, held) else { return nil }
        if owned.dispatchFD == nil {
            owned.dispatchFD = Descriptor(Int32(rlk_dispatch_main_queue_handle()))
            watchMainQueue(held)
        }
        return owned.dispatchFD
    }

    /// Adds `port` to the run's mode's wait set, or (nil) takes the descriptor out of it for
    /// this run, to be put back by `restoreAsyncPort`. Rare (a mode's first run that services
    /// the queue, a run nested in the queue's drain), so a failure is reported here, with the
    /// lock released for the moment: the run's first section goes on after it.
    @inline(never)
    private func updateAsyncPortInSet(_ port: Descriptor?, _ run: RunContext, _ held: borrowing LoopLock.Held) {
        let state = run.mode
        if let port {
            // On a failure the next run tries again (reported).
            if addAsyncPort(port, to: state)
                .deferringFailure(.systemCallFailed, "adding the async queue to mode '\(state.mode)'; the next run tries again", held) != nil {
                held[state].asyncInSet = port
            }
        } else if let inSet = held[state].asyncInSet {
            valueOrErrno("epoll_ctl(DEL)") { rlk_epoll_remove(state.epollFD.raw, inSet.raw) }
                .deferringFailure(.systemCallFailed, "taking the async queue out of mode '\(state.mode)'", held)
            run.frame.scratch.pointee.removedAsyncPort = inSet
            held[state].asyncInSet = nil
        }
        held.reportDeferredWhileReleased()
    }

    /// R5.6: puts back the async descriptor a run took out of its mode's set (L1). Loop thread,
    /// at the end of the run. Rare (a run nested in the queue's drain), so a failure is
    /// reported here, with the lock released for the moment: the run's last section goes on
    /// after it.
    @inline(__always)
    func restoreAsyncPort(_ run: RunContext, _ held: borrowing LoopLock.Held) {
        guard let removed = run.frame.scratch.pointee.removedAsyncPort else { return }
        let state = run.mode
        if !held.loop.tornDown && held[state].asyncInSet == nil {
            if addAsyncPort(removed, to: state)
                .deferringFailure(.systemCallFailed, "putting the async queue back into mode '\(state.mode)'; the next run tries again", held) != nil {
                held[state].asyncInSet = removed
            }
        }
        run.frame.scratch.pointee.removedAsyncPort = nil
        held.reportDeferredWhileReleased()
    }

    /// Adds the async queue's descriptor to `state`'s wait set. One already there counts as
    /// added: a take-out that failed (reported then) leaves it in the set, and without this every
    /// later add would fail with EEXIST, be reported on every run, and never be recorded.
    private func addAsyncPort(_ port: Descriptor, to state: ModeState) -> Result<Int32, SystemCallError> {
        let added = valueOrErrno("epoll_ctl(ADD)") { rlk_epoll_add(state.epollFD.raw, port.raw, 1, WaitToken.async, 0) }
        if case .failure(let failure) = added, failure.code == EEXIST { return .success(0) }
        return added
    }

    /// R4a for the main loop: on the main thread, not inside a main-queue drain, running a
    /// common mode.
    func mainQueueClause(_ state: ModeState, _ held: borrowing LoopLock.Held) -> Bool {
        // The main loop's owner is the main thread, so comparing pthread handles (a thread-local
        // read) decides "on the main thread" without the gettid/getpid system calls.
        isMainLoop && held.loop.insideAsyncDrain == 0 && pthread_equal(pthread_self(), owner) != 0 && held[state].isCommon
    }

    /// R4a's analogue for other loops: a common mode, not inside this loop's drain.
    @inline(__always)
    func asyncClauseActive(_ state: ModeState, _ held: borrowing LoopLock.Held) -> Bool {
        !isMainLoop && held.loop.asyncFD != nil && held.loop.insideAsyncDrain == 0 && held[state].isCommon
    }

    /// The fast path's probe: is work waiting right now? Consumes the readiness.
    ///
    /// The main loop's probe (a system call) is a function of its own: inside this one it made
    /// every call save and restore all registers around the common answer, one atomic load,
    /// which cost each pass of a long run 22 instructions (callgrind,
    /// `loop-pass-callgrind.sh --only chain`). Not inlined either: in the pass's wait it kept
    /// the whole wait from being inlined (46 instructions more on the polling pass).
    @inline(never)
    func asyncReadyNow() -> Bool {
        isMainLoop ? mainQueueReadyNow() : mirrors.hasAsyncWork
    }

    /// The main loop's probe: reads (and so clears) the main queue's descriptor.
    @inline(never)
    private func mainQueueReadyNow() -> Bool {
        owned.mainQueueMayBeReady = false   // a poke after this read reaches the watch
        guard let port = owned.dispatchFD else { return false }
        return drainCounter(port.raw, "the main queue's descriptor").reported() > 0
    }

    /// X4: services the queue once: a snapshot of the queued work, each item a callout; work
    /// queued meanwhile waits for the next pass that waits.
    func drainAsyncQueue(_ run: RunContext) {
        if isMainLoop {
            lock.withLock { $0.loop.insideAsyncDrain += 1 }
            callOutToMainQueue(run.mode.mode)
            lock.withLock { $0.loop.insideAsyncDrain -= 1 }
            return
        }
        let scratch = run.frame.scratch
        lock.withLockReporting { held in
            held.loop.insideAsyncDrain += 1
            takeAsyncWork(into: &scratch.pointee.async, held)
            if let descriptor = held.loop.asyncFD { drainCounter(descriptor.raw, "the async queue's descriptor").deferred(held) }
        }
        // Each item's work is moved out of the drained list, which only this run's frame uses
        // (a nested run drains into a frame of its own).
        scratch.pointee.async.withUnsafeMutableBufferPointer { items in
            for index in items.indices {
                let work = items[index].takeWork()
                callOut(.mainQueue, items[index].label, run.mode.mode) { work() }
            }
        }
        scratch.pointee.async.truncate(to: 0)
        lock.withLock { $0.loop.insideAsyncDrain -= 1 }
    }
}
