import Synchronization

/// Per-run data (R5) plus the pass's reusable scratch buffers, one set per nesting depth so a
/// steady-state pass allocates nothing and a nested run cannot disturb the outer snapshot.
///
/// Three parts with their own rules: `controlStorage` (a stop request, the run's serial, W3's
/// flag), which other threads reach under the loop's lock (`LoopLock.Held[frame]`); `scratch`,
/// which only the loop thread touches, one step at a time; and `pollingPass`, W3's second
/// window, an atomic the loop thread sets without the lock (see `Loop.decideWakeUp`).
final class RunFrame: Sendable {
    /// `nonisolated(unsafe)`: reached only through `LoopLock.Held`, with the loop's lock held.
    nonisolated(unsafe) let controlStorage = LockGuardedStorage(RunControl())
    /// Behind a pointer so the hot per-item appends and reads skip Swift's dynamic exclusivity
    /// checks on class properties (they were a third of a pass's instructions).
    /// `nonisolated(unsafe)`: only the loop's thread touches it, one pass step at a time.
    nonisolated(unsafe) let scratch: UnsafeMutablePointer<Scratch>
    /// W3: the current pass has performed a source0, so its wait only polls. Behind a pointer
    /// so the handle reaches it as it reaches the rest. `nonisolated(unsafe)`: an atomic.
    nonisolated(unsafe) let pollingPass: UnsafeMutablePointer<Atomic<Bool>>

    struct Scratch {
        /// The settings of the run using this frame.
        var settings = RunSettings()
        /// The async descriptor this run took out of its mode's wait set (L1), to put back.
        var removedAsyncPort: Descriptor?
        /// The snapshot of the running mode's observers this run's notifications use; the
        /// run takes it when it starts and again when the mode's observers change (O4, O5).
        var observerSnapshot: ObserverSnapshot?
        /// Its `version`; 0 = none held.
        var observersHeldVersion: UInt64 = 0
        /// Its `entries` and `starts`, read by each notification without touching the object.
        var observerEntries: UnsafeMutablePointer<Unmanaged<LoopObserver>>?
        var observerStarts: UnsafeMutablePointer<Int>?
        var sources: [Source0Pick] = []
        var timers: [DueTimer] = []
        var blocks: [PendingBlock] = []
        var async: [AsyncWork] = []
        /// One wait's ready events (token, readiness), room for `readyCapacity`.
        var readyTokens: UnsafeMutablePointer<UInt64>
        var readyFlags: UnsafeMutablePointer<UInt32>
        /// The fd sources found ready by the last wait, in handling order.
        var readyFiles: [(source: LoopFileSource, ready: UInt32)] = []
    }

    /// How many events one wait collects when several fd sources may be ready together.
    static let readyCapacity = 64

    init() {
        pollingPass = .allocate(capacity: 1)
        pollingPass.initialize(to: Atomic(false))
        scratch = .allocate(capacity: 1)
        scratch.initialize(to: Scratch(readyTokens: .allocate(capacity: RunFrame.readyCapacity),
                                       readyFlags: .allocate(capacity: RunFrame.readyCapacity)))
    }

    deinit {
        controlStorage.free()
        scratch.pointee.readyTokens.deallocate()
        scratch.pointee.readyFlags.deallocate()
        scratch.deinitialize(count: 1)
        scratch.deallocate()
        pollingPass.deinitialize(count: 1)
        pollingPass.deallocate()
    }

    /// What a run uses of its frame: the frame's own storage, reached without a reference to
    /// the frame (the loop keeps every frame it pushed, so a run needs no reference counting
    /// of its frame).
    var handle: RunFrameHandle {
        RunFrameHandle(controlStorage: controlStorage, scratch: scratch, pollingPass: pollingPass)
    }
}

/// A run's frame as the run reaches it: its lock-guarded control state (`held[frame]`) and
/// its scratch buffers (loop thread only).
struct RunFrameHandle {
    let controlStorage: LockGuardedStorage<RunControl>
    let scratch: UnsafeMutablePointer<RunFrame.Scratch>
    let pollingPass: UnsafeMutablePointer<Atomic<Bool>>

    /// Takes the snapshot of `state`'s current observers (none if it has none) and returns the
    /// one held before, for the caller to release after the loop's lock. Loop thread.
    @inline(__always)
    func replaceObserverSnapshot(_ state: ModeState, _ held: borrowing LoopLock.Held) -> ObserverSnapshot? {
        let previous = state.takeBack(scratch.pointee.observerSnapshot.take(), held)
        holdObserverSnapshot(state, held)
        return previous
    }

    /// Takes the snapshot of `state`'s current observers (none if it has none) into a frame
    /// that holds none: a run's start, as the run that used the frame last dropped its own.
    /// Loop thread.
    @inline(__always)
    func holdObserverSnapshot(_ state: ModeState, _ held: borrowing LoopLock.Held) {
        assert(scratch.pointee.observerSnapshot == nil, "a run's frame still holds an observer snapshot")
        scratch.pointee.observersHeldVersion = state.observersVersion.load(ordering: .relaxed)
        scratch.pointee.observerSnapshot = state.lendObserverSnapshot(held)
        scratch.pointee.observerEntries = scratch.pointee.observerSnapshot?.entries
        scratch.pointee.observerStarts = scratch.pointee.observerSnapshot?.starts
    }

    /// Hands the run's snapshot back to `state` if it is still the mode's current one; a stale
    /// one stays for `releaseObserverSnapshot`. Loop thread, end of a run, lock held.
    @inline(__always)
    func returnObserverSnapshot(_ state: ModeState, _ held: borrowing LoopLock.Held) {
        if scratch.pointee.observerSnapshot != nil {
            scratch.pointee.observerSnapshot = state.takeBack(scratch.pointee.observerSnapshot.take(), held)
        }
    }

    /// Drops what is left of the run's observer snapshot (O5): a stale one, so observers
    /// removed meanwhile are released with it. Loop thread, end of a run, lock released.
    @inline(__always)
    func releaseObserverSnapshot() {
        scratch.pointee.observersHeldVersion = 0
        scratch.pointee.observerEntries = nil
        scratch.pointee.observerStarts = nil
        if scratch.pointee.observerSnapshot != nil { scratch.pointee.observerSnapshot = nil }
    }
}
