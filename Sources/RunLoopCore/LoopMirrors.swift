import Synchronization

// What a pass reads without the loop's lock, and the only code that writes it.
//
// A pass looks at its queues many times, and nearly always finds them empty: taking the lock
// for each look would be most of an idle pass's cost. So each queue has a lock-free mirror,
// "is it non-empty", that the pass tests first. A mirror is only as good as the discipline
// that keeps it equal to its queue; here that discipline is the file boundary: the queues'
// storage can be changed only in this file (`fileprivate(set)`), and every change here sets
// the mirror in the same critical section.

/// The loop's block queue (B1: blocks and Swift Concurrency jobs, one FIFO) and async queue
/// (work from `submit`). Guarded by the loop's lock; readable by anyone holding it, changed only
/// through the `Loop` methods below.
struct LoopQueues {
    fileprivate(set) var blocks: [PendingBlock] = []
    fileprivate(set) var asyncWork: [AsyncWork] = []
}

/// The lock-free mirrors of the loop's queues, and an epoch of the changes that decide how a
/// run starts.
struct LoopMirrors: ~Copyable {
    fileprivate let blocksQueued = Atomic<Bool>(false)
    fileprivate let asyncWorkQueued = Atomic<Bool>(false)
    fileprivate let controlEpoch = Atomic<UInt64>(0)

    /// A block or job is queued (a pass that reads false is as if it looked before the enqueue).
    var hasBlocks: Bool { blocksQueued.load(ordering: .acquiring) }
    /// Async work is queued (non-main loops).
    var hasAsyncWork: Bool { asyncWorkQueued.load(ordering: .acquiring) }
    /// Moves whenever a stop, a common mode or the teardown changes what L0/L1 decide for a
    /// run that is starting (see `Loop.settleBeforeEntry`).
    var epoch: UInt64 { controlEpoch.load(ordering: .acquiring) }
}

extension Loop {
    // MARK: Blocks and jobs

    /// Appends a block or job (B1).
    @inline(__always)
    func appendBlock(_ block: consuming PendingBlock, _ held: borrowing LoopLock.Held) {
        held.loop.queues.blocks.append(block)
        mirrors.blocksQueued.store(true, ordering: .releasing)
    }

    /// B2's first half: moves the whole queue into `detached` (which must be empty), leaving the
    /// loop's queue empty with `detached`'s old storage. Whether any block was queued.
    @inline(__always)
    func detachBlocks(into detached: inout [PendingBlock], _ held: borrowing LoopLock.Held) -> Bool {
        if held.loop.queues.blocks.isEmpty { return false }
        swap(&held.loop.queues.blocks, &detached)
        mirrors.blocksQueued.store(false, ordering: .releasing)
        return true
    }

    /// B2.4: blocks that did not run go back in front of those queued meanwhile. `survivors`
    /// ends empty, keeping its capacity.
    func putBackBlocks(_ survivors: inout [PendingBlock], _ held: borrowing LoopLock.Held) {
        survivors.append(contentsOf: held.loop.queues.blocks)
        swap(&held.loop.queues.blocks, &survivors)
        survivors.truncate(to: 0)
        mirrors.blocksQueued.store(!held.loop.queues.blocks.isEmpty, ordering: .releasing)
    }

    /// Removes the Swift Concurrency jobs from the queue, in order, leaving the blocks (W6).
    func takeJobs(_ held: borrowing LoopLock.Held) -> [PendingBlock] {
        guard held.loop.queues.blocks.contains(where: { $0.job != nil }) else { return [] }
        var jobs: [PendingBlock] = []
        held.loop.queues.blocks.removeAll { block in
            guard block.job != nil else { return false }
            jobs.append(block)
            return true
        }
        mirrors.blocksQueued.store(!held.loop.queues.blocks.isEmpty, ordering: .releasing)
        return jobs
    }

    /// W6: teardown drops every block and all async work.
    /// Returns the queues dropped, for the caller to release once the lock is released.
    func dropQueues(_ held: borrowing LoopLock.Held) -> LoopQueues {
        let dropped = held.loop.queues
        held.loop.queues = LoopQueues()
        mirrors.blocksQueued.store(false, ordering: .releasing)
        mirrors.asyncWorkQueued.store(false, ordering: .releasing)
        return dropped
    }

    // MARK: Async work (non-main loops)

    /// Appends async work; true when the queue was empty before (its descriptor must then be
    /// made readable).
    @inline(__always)
    func appendAsyncWork(_ work: AsyncWork, _ held: borrowing LoopLock.Held) -> Bool {
        held.loop.queues.asyncWork.append(work)
        guard held.loop.queues.asyncWork.count == 1 else { return false }
        mirrors.asyncWorkQueued.store(true, ordering: .releasing)
        return true
    }

    /// X4: takes the queued async work into `drained` (which must be empty).
    @inline(__always)
    func takeAsyncWork(into drained: inout [AsyncWork], _ held: borrowing LoopLock.Held) {
        swap(&held.loop.queues.asyncWork, &drained)
        mirrors.asyncWorkQueued.store(false, ordering: .releasing)
    }

    // MARK: The control epoch

    /// Records a change that can alter L0 or L1 of a run that is starting: a stop, a new common
    /// mode, the teardown. Call in the critical section that makes the change.
    @inline(__always)
    func controlChanged(_ held: borrowing LoopLock.Held) {
        mirrors.controlEpoch.wrappingAdd(1, ordering: .releasing)
    }
}
