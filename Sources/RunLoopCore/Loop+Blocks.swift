import RunLoopDiagnostics
import CRunLoopShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch

// Blocks (B1–B4): closures performed on the loop in chosen modes, one FIFO with the Swift
// Concurrency jobs (B5).

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
        enqueue(inMode: mode, label: label, work: block)
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
        let work: OwnerThreadCallout = OwnerThreadCallout("Loop.performOnOwnerThread", loop: self, block)
        return perform(inMode: mode, label: label) { work() }
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
        let owned: OwnerThreadCallout = OwnerThreadCallout("Loop.submitOnOwnerThread", loop: self, work)
        return submit(label: label) { owned() }
    }

    /// Queues a block for one mode (B1), creating it; false, with a diagnostic, when the loop's
    /// thread has exited. The block is made under the lock, where its mode is looked up
    /// anyway: it targets the mode's state, not its name.
    private func enqueue(inMode name: Loop.Mode, label: String, work: @escaping @Sendable () -> Void) -> Bool {
        let held = lock.lock()
        guard !held.loop.tornDown else {
            held.unlock()
            reportBlockAfterTeardown(label: label)
            return false
        }
        // The cached lookup first: `modeState` returns a strong reference, a retain and a
        // release.
        if name.isCommonModes {
            appendBlock(PendingBlock(target: .common, label: label, work: work), held)
        } else if let state = lastLookedUp(name, held) ?? modeState(name, create: false, held).map(Unmanaged.passUnretained) {
            appendBlock(PendingBlock(target: .mode(state), label: label, work: work), held)
        } else {
            return enqueueCreatingMode(name, label: label, work: work, held)
        }
        held.unlock()
        return true
    }

    /// `enqueue(inMode:)` when the mode does not exist yet: creates it (B1), or names it when
    /// it cannot be made now. Out of line, as `enqueueCreatingModes`.
    @inline(never)
    private func enqueueCreatingMode(_ name: Loop.Mode, label: String, work: @escaping @Sendable () -> Void,
                                     _ held: consuming LoopLock.Held) -> Bool {
        let target: PendingBlock.Target = modeState(name, create: true, held).map { .mode(Unmanaged.passUnretained($0)) }
            ?? .named(name)
        appendBlock(PendingBlock(target: target, label: label, work: work), held)
        held.unlockReporting()
        return true
    }

    /// Queues a block or a job (B1), creating its modes; false, with a diagnostic, when the
    /// loop's thread has exited. The block is consumed: it moves into the queue without a copy
    /// (no retain of its closure, label and modes, and no release of the caller's copy).
    func enqueue<C: Collection<Loop.Mode>>(_ block: consuming PendingBlock, modes names: C) -> Bool {
        let held = lock.lock()
        guard !held.loop.tornDown else {
            held.unlock()
            reportBlockAfterTeardown(label: block.label)
            return false
        }
        var allExist = true
        for name in names where modeState(name, create: false, held) == nil && !name.isCommonModes {
            allExist = false
            break
        }
        guard allExist else { return enqueueCreatingModes(block, modes: names, held) }
        appendBlock(block, held)
        held.unlock()
        return true
    }

    /// `enqueue` when some of the modes do not exist yet: creates them (B1). Out of line: a
    /// mode whose descriptors cannot be made is reported once the lock is released, and that
    /// test stays off the usual enqueue.
    @inline(never)
    private func enqueueCreatingModes<C: Collection<Loop.Mode>>(_ block: consuming PendingBlock, modes names: C,
                                                                 _ held: consuming LoopLock.Held) -> Bool {
        for name in names { _ = modeState(name, create: true, held) }
        appendBlock(block, held)
        held.unlockReporting()
        return true
    }

    /// A block or job queued on a loop whose thread has exited: it will never run.
    func reportBlockAfterTeardown(label: String) {
        Diagnostics.report(.error, .workAfterTeardown,
                           "'\(label)' was queued on a loop whose thread has exited; it will not run",
                           item: label)
    }

    /// R4e: whether a pending block targets `state`.
    func hasBlock(for state: ModeState, _ held: borrowing LoopLock.Held) -> Bool {
        guard !held.loop.queues.blocks.isEmpty else { return false }
        let isCommon = held[state].isCommon
        // Through the buffer: each block is looked at in place, not copied out. The blocks
        // that name their modes are compared by name only when no other block matched: a
        // string comparison in the first walk made it retain and release the queue's storage.
        let me = Unmanaged.passUnretained(state)
        let byIdentity = held.loop.queues.blocks.withUnsafeBufferPointer { blocks in
            var found = false, named = false
            for index in blocks.indices {
                switch blocks[index].target {
                case .mode(let other): found = other.toOpaque() == me.toOpaque()
                case .common: found = isCommon
                case .named, .several: named = true
                }
                if found { break }
            }
            return found ? true : named ? nil : false   // nil: a block that names its modes may match
        }
        if let byIdentity { return byIdentity }
        return held.loop.queues.blocks.contains { $0.matches(me, state.mode, isCommon: isCommon) }
    }

    /// B2: detach the queue, run the blocks for this mode in FIFO order with the lock released,
    /// then put the others back in front of any blocks queued meanwhile. Returns whether any ran.
    @discardableResult
    func doBlocks(_ run: RunContext) -> Bool {
        // A block performed by another thread meanwhile is as if performed after this step.
        guard mirrors.hasBlocks else { return false }
        let held = lock.lock()
        let detached = detachBlocks(into: &run.frame.scratch.pointee.blocks, held)
        let isCommon = held[run.mode].isCommon
        held.unlock()
        guard detached else { return false }
        return runDetachedBlocks(run, isCommon: isCommon)
    }

    /// B2's second half, lock released: runs the detached blocks of this mode, puts the others
    /// back. Returns whether any ran.
    @discardableResult
    func runDetachedBlocks(_ run: RunContext, isCommon known: Bool) -> Bool {
        var isCommon = known
        let mode = run.mode
        // Each block runs from its place in the detached queue, its work moved out (no copy,
        // so no retain and release of its closure, label and modes); survivors are swapped
        // forward in order and the blocks that ran, now at the end, are dropped together. Only
        // this run's frame uses this scratch queue: a nested run has a frame of its own.
        var ran = false
        let kept = run.frame.scratch.pointee.blocks.withUnsafeMutableBufferPointer { blocks -> Int in
            var kept = 0
            for index in blocks.indices {
                if blocks[index].targets(Unmanaged.passUnretained(mode), mode.mode)
                    || (blocks[index].targetsCommon && isCommonNow(mode, &isCommon)) {
                    ran = true
                    callOutToBlock(in: blocks.baseAddress! + index, mode.mode)  // B4: one callout per block
                } else {
                    if kept != index { blocks.swapAt(kept, index) }
                    kept += 1
                }
            }
            return kept
        }
        run.frame.scratch.pointee.blocks.truncate(to: kept)
        if !run.frame.scratch.pointee.blocks.isEmpty {
            lock.withLock { putBackBlocks(&run.frame.scratch.pointee.blocks, $0) }
        }
        return ran
    }

    /// B2: CF tests common-mode membership against the LIVE set while it walks, so a block that
    /// calls `addCommonMode(currentMode)` lets a later `.common` block run in the same walk. A
    /// mode never becomes uncommon again (M4), so only a mode that was not common needs a fresh
    /// look, and only for blocks that target `.common`.
    @inline(__always)
    private func isCommonNow(_ state: ModeState, _ known: inout Bool) -> Bool {
        if !known { known = lock.withLock { $0[state].isCommon } }
        return known
    }
}
