import RunLoopDiagnostics
import CRunLoopShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch

// Blocks (B1–B4) and the async queue (R4a, L1, X4).

extension Loop {
    /// Queues a block for the next time the loop runs `mode` (B1). Creates the mode. Does NOT
    /// wake the loop: a sleeping loop runs it after something else wakes it (use
    /// ``performAndWake(inMode:label:_:)`` for that). `.common` targets every common mode.
    ///
    /// ```swift
    /// loop.perform(inMode: .default, label: "refresh") { print("refresh") }
    /// ```
    ///
    /// - Returns: false, with a diagnostic, when the loop's thread has exited: the block will
    ///   never run.
    @discardableResult
    public func perform(inMode mode: Loop.Mode = .default, label: String = "block",
                        _ block: @escaping @Sendable () -> Void) -> Bool {
        enqueue(PendingBlock(target: .one(mode), label: label, work: block), modes: CollectionOfOne(mode))
    }

    /// Queues a block for the next run of any of `modes` (B1). Returns false when the block
    /// will never run: the list is empty, or the loop's thread has exited (with a diagnostic).
    @discardableResult
    public func perform(inModes modes: [Loop.Mode], label: String = "block",
                        _ block: @escaping @Sendable () -> Void) -> Bool {
        guard !modes.isEmpty else { return false }
        return enqueue(PendingBlock(target: .several(modes), label: label, work: block), modes: modes)
    }

    /// `perform` followed by `wakeUp()`, for a loop that may be sleeping.
    ///
    /// ```swift
    /// Loop.main.performAndWake { print("on the main loop") }
    /// ```
    @discardableResult
    public func performAndWake(inMode mode: Loop.Mode = .default, label: String = "block",
                               _ block: @escaping @Sendable () -> Void) -> Bool {
        guard perform(inMode: mode, label: label, block) else { return false }
        wakeUp()
        return true
    }

    /// `perform` for a closure that is not `Sendable`, from the loop's own thread: the closure
    /// is made there and runs there (blocks run only on the loop's thread), so it may capture
    /// state that never leaves that thread — the main actor's top-level variables on
    /// ``Loop/main``, a detached loop's local counters in a test. Called on any other thread it
    /// stops the process with a message naming both threads. For state another thread must
    /// hand over, use ``LoopBound``.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// final class Log { var lines: [String] = [] }     // not Sendable
    /// let log = Log()
    /// loop.performOnOwnerThread { log.lines.append("ran") }
    /// loop.run(mode: .default, timeout: 0)
    /// ```
    ///
    /// - Returns: false, with a diagnostic, when the loop was torn down.
    @discardableResult
    public func performOnOwnerThread(inMode mode: Loop.Mode = .default, label: String = "block",
                                     _ block: @escaping () -> Void) -> Bool {
        preconditionOnOwnerThread("Loop.performOnOwnerThread")
        let work = OwnerThreadWork(block)
        return perform(inMode: mode, label: label) { work.run() }
    }

    /// ``submit(label:_:)`` for a closure that is not `Sendable`, from the loop's own thread
    /// (checked as ``performOnOwnerThread(inMode:label:_:)`` checks it): the work runs in a
    /// later drain of the loop's async queue (on ``Loop/main``, the main dispatch queue, which
    /// only the main thread drains).
    ///
    /// - Returns: false, with a diagnostic, when the loop was torn down.
    @discardableResult
    public func submitOnOwnerThread(label: String = "mainQueue", _ work: @escaping () -> Void) -> Bool {
        preconditionOnOwnerThread("Loop.submitOnOwnerThread")
        let owned = OwnerThreadWork(work)
        return submit(label: label) { owned.run() }
    }

    /// Queues a block or a job (B1), creating its modes; false, with a diagnostic, when the
    /// loop's thread has exited.
    /// The block is consumed: it moves into the queue without a copy (no retain of its
    /// closure, label and modes, and no release of the caller's copy).
    func enqueue<C: Collection<Loop.Mode>>(_ block: consuming PendingBlock, modes names: C) -> Bool {
        lock.lock()
        guard !guarded.tornDown else {
            lock.unlock()
            reportBlockAfterTeardown(label: block.label)
            return false
        }
        for name in names { _ = modeStateLocked(name, create: true) }
        guarded.blocks.append(block)
        hasBlocks.store(true, ordering: .releasing)
        lock.unlock()
        return true
    }

    /// A block or job queued on a loop whose thread has exited: it will never run.
    func reportBlockAfterTeardown(label: String) {
        Diagnostics.report(.error, .workAfterTeardown,
                           "'\(label)' was queued on a loop whose thread has exited; it will not run",
                           item: label)
    }

    /// Whether a pending block targets `state` (R4e). Lock held.
    func hasBlockLocked(for state: ModeState) -> Bool {
        guard !guarded.blocks.isEmpty else { return false }
        let isCommon = state.guarded.isCommon
        // Through the buffer: each block is looked at in place, not copied out.
        return guarded.blocks.withUnsafeBufferPointer { blocks in
            blocks.contains { $0.matches(state.mode, isCommon: isCommon) }
        }
    }

    /// B2: detach the queue, run the blocks for this mode in FIFO order with the lock released,
    /// then put the others back in front of any blocks queued meanwhile. Returns whether any ran.
    @discardableResult
    func doBlocks(_ state: ModeState, _ frame: RunFrame) -> Bool {
        // A block performed by another thread meanwhile is as if performed after this step.
        guard hasBlocks.load(ordering: .acquiring) else { return false }
        lock.lock()
        let detached = detachBlocksLocked(state, frame)
        lock.unlock()
        guard let isCommon = detached else { return false }
        return runDetachedBlocks(state, frame, isCommon: isCommon)
    }

    /// B2's first half: moves the queue into the frame's scratch queue. Returns whether the
    /// mode was common at that moment, or nil when no block was queued. Lock held.
    @inline(__always)
    func detachBlocksLocked(_ state: ModeState, _ frame: RunFrame) -> Bool? {
        if guarded.blocks.isEmpty { return nil }
        swap(&guarded.blocks, &frame.scratch.pointee.blocks)
        hasBlocks.store(false, ordering: .releasing)
        return state.guarded.isCommon
    }

    /// B2's second half, lock released: runs the detached blocks of this mode, puts the others
    /// back. Returns whether any ran.
    @discardableResult
    func runDetachedBlocks(_ state: ModeState, _ frame: RunFrame, isCommon known: Bool) -> Bool {
        var isCommon = known
        // Each block runs from its place in the detached queue (no copy, so no retain and
        // release of its closure, label and modes); survivors are swapped forward in order and
        // the blocks that ran, now at the end, are dropped together. Only this run's frame
        // uses this scratch queue: a nested run has a frame of its own.
        var ran = false
        let kept = frame.scratch.pointee.blocks.withUnsafeMutableBufferPointer { blocks -> Int in
            var kept = 0
            for index in blocks.indices {
                if blocks[index].targets(state.mode)
                    || (blocks[index].targetsCommon && isCommonNow(state, &isCommon)) {
                    ran = true
                    callOutToBlock(blocks[index], state.mode)  // B4
                } else {
                    if kept != index { blocks.swapAt(kept, index) }
                    kept += 1
                }
            }
            return kept
        }
        frame.scratch.pointee.blocks.truncate(to: kept)

        if !frame.scratch.pointee.blocks.isEmpty {
            // B2.4: survivors go back in front of the blocks queued during the walk.
            lock.lock()
            frame.scratch.pointee.blocks.append(contentsOf: guarded.blocks)
            swap(&guarded.blocks, &frame.scratch.pointee.blocks)
            hasBlocks.store(true, ordering: .releasing)
            lock.unlock()
            frame.scratch.pointee.blocks.truncate(to: 0)
        }
        return ran
    }

    /// B2: CF tests common-mode membership against the LIVE set while it walks, so a block that
    /// calls `addCommonMode(currentMode)` lets a later `.common` block run in the same walk. A
    /// mode never becomes uncommon again (M4), so only a mode that was not common needs a fresh
    /// look, and only for blocks that target `.common`.
    @inline(__always)
    private func isCommonNow(_ state: ModeState, _ known: inout Bool) -> Bool {
        if !known { known = lock.withLock { state.guarded.isCommon } }
        return known
    }

    // MARK: Async queue

    /// Runs `work` on this loop's thread, with the main dispatch queue's semantics.
    ///
    /// On the main thread's loop this is `DispatchQueue.main.async` (so `@MainActor` work and
    /// other main-queue users share the queue), drained by the loop as CF does (R4a, X4). On any
    /// other loop it is a per-loop FIFO with an eventfd, serviced the same way: only while the
    /// loop runs one of its common modes, at most one drain per pass, a snapshot per drain, and
    /// the fast path that skips BW/AW when work is already waiting (`didDispatchPortLastTime`).
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
        let (accepted, signalled) = lock.withLock { () -> (Bool, Result<Int32, SystemCallError>) in
            guard !guarded.tornDown else { return (false, .success(0)) }
            guarded.asyncPending.append(AsyncWork(label: label, work: work))
            guard guarded.asyncPending.count == 1 else { return (true, .success(0)) }
            hasAsyncPending.store(true, ordering: .releasing)
            // The queue became non-empty: make the async descriptor readable. Under the lock,
            // so teardown cannot close the descriptor in between.
            return (true, valueOrErrno("write(eventfd)") { rlk_eventfd_signal(guarded.asyncFD) })
        }
        signalled.reportingFailure(.systemCallFailed, "waking the loop for submitted work", item: label)
        if !accepted {
            Diagnostics.report(.error, .workAfterTeardown,
                               "work '\(label)' was submitted to a loop whose thread has exited; it will not run",
                               item: label)
        }
        return accepted
    }

    /// L1: the descriptor the async queue signals if this run services it, else -1. Lock held,
    /// loop thread, at the start of a run (after L0).
    ///
    /// CF adds the main-queue port to the mode's port set before each wait and removes it after
    /// (two `epoll_ctl` calls per wake). Here the descriptor stays in the set of every mode that
    /// has been run as a common mode, which gives the same waits: a run that services the queue
    /// finds it there, and a run that must not (a nested run inside the queue's own drain, R4a)
    /// takes it out for its duration and `restoreAsyncPort` puts it back when it ends. Leaving
    /// a readable descriptor in the set of such a run instead would make every wait return at
    /// once (level-triggered) and the run spin.
    func asyncPortForRun(_ state: ModeState, _ frame: RunFrame) -> Int32 {
        let port: Int32
        if isMainLoop {
            if mainQueueClauseLocked(state) {
                if owned.dispatchFD < 0 {
                    owned.dispatchFD = Int32(rlk_dispatch_main_queue_handle())
                    watchMainQueue()
                }
                port = owned.dispatchFD
            } else {
                port = -1
            }
        } else {
            port = asyncClauseActiveLocked(state) ? guarded.asyncFD : -1
        }
        if port >= 0 {
            if state.guarded.asyncInSet < 0 {
                // On a failure the next run tries again (reported).
                if valueOrErrno("epoll_ctl(ADD)", { rlk_epoll_add(state.epollFD, port, 1, WaitToken.async, 0) })
                    .reportingFailure(.systemCallFailed, "adding the async queue to mode '\(state.mode)'; the next run tries again") != nil {
                    state.guarded.asyncInSet = port
                }
            }
        } else if state.guarded.asyncInSet >= 0 {
            valueOrErrno("epoll_ctl(DEL)") { rlk_epoll_remove(state.epollFD, state.guarded.asyncInSet) }
                .reportingFailure(.systemCallFailed, "taking the async queue out of mode '\(state.mode)'")
            frame.removedAsyncPort = state.guarded.asyncInSet
            state.guarded.asyncInSet = -1
        }
        return port
    }

    /// Puts back the async descriptor a run took out of its mode's set (L1). Lock held, loop
    /// thread, at the end of the run.
    @inline(__always)
    func restoreAsyncPort(_ state: ModeState, _ frame: RunFrame) {
        guard frame.removedAsyncPort >= 0 else { return }
        if !guarded.tornDown && state.guarded.asyncInSet < 0 {
            if valueOrErrno("epoll_ctl(ADD)", { rlk_epoll_add(state.epollFD, frame.removedAsyncPort, 1, WaitToken.async, 0) })
                .reportingFailure(.systemCallFailed, "putting the async queue back into mode '\(state.mode)'; the next run tries again") != nil {
                state.guarded.asyncInSet = frame.removedAsyncPort
            }
        }
        frame.removedAsyncPort = -1
    }

    /// R4a for the main loop: on the main thread, not inside a main-queue drain, running a
    /// common mode. Lock held.
    func mainQueueClauseLocked(_ state: ModeState) -> Bool {
        // The main loop's owner is the main thread, so comparing pthread handles (a thread-local
        // read) decides "on the main thread" without the gettid/getpid system calls.
        isMainLoop && guarded.insideAsyncDrain == 0 && pthread_equal(pthread_self(), owner) != 0 && state.guarded.isCommon
    }

    /// The per-loop analogue: a common mode, not inside this loop's drain. Lock held.
    func asyncClauseActiveLocked(_ state: ModeState) -> Bool {
        !isMainLoop && guarded.asyncFD >= 0 && guarded.insideAsyncDrain == 0 && state.guarded.isCommon
    }

    /// The fast-path probe: is work waiting right now? Consumes the readiness.
    func asyncReadyNow() -> Bool {
        if isMainLoop {
            owned.mainQueueMayBeReady = false   // a poke after this read reaches the watch
            return drainCounter(owned.dispatchFD, "the main queue's descriptor") > 0
        }
        return hasAsyncPending.load(ordering: .acquiring)
    }

    /// Services the queue once: a snapshot of the queued work, each item a
    /// callout; work queued meanwhile waits for the next pass that waits.
    func drainAsyncQueue(_ state: ModeState, _ frame: RunFrame) {
        if isMainLoop {
            lock.withLock { guarded.insideAsyncDrain += 1 }
            callOutToMainQueue(state.mode)
            lock.withLock { guarded.insideAsyncDrain -= 1 }
            return
        }
        lock.lock()
        guarded.insideAsyncDrain += 1
        swap(&guarded.asyncPending, &frame.scratch.pointee.async)
        hasAsyncPending.store(false, ordering: .releasing)   // the scratch queue was empty
        _ = drainCounter(guarded.asyncFD, "the async queue's descriptor")
        lock.unlock()
        var index = 0
        while index < frame.scratch.pointee.async.count {
            let item = frame.scratch.pointee.async[index]
            index += 1
            callOut(.mainQueue, item.label, state.mode) { item.work() }
        }
        frame.scratch.pointee.async.truncate(to: 0)
        lock.withLock { guarded.insideAsyncDrain -= 1 }
    }
}

/// A closure that is not `Sendable`, made on a loop's thread and run only there.
/// `@unchecked Sendable`: the `performOnOwnerThread`/`submitOnOwnerThread` check that it is
/// made on the owner thread, and blocks and async work run only on that thread, so it never
/// runs concurrently with its maker.
private struct OwnerThreadWork: @unchecked Sendable {
    private let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
    func run() { body() }
}
