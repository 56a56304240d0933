import RunLoopDiagnostics
import PThreads
import CRunLoopShims
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A run loop with CFRunLoop's semantics (see `Docs/RunLoop.md` and the rule ids in comments).
///
/// Each thread has one loop (`Loop.current`), created on first use and torn down when the
/// thread exits. A loop can only be run on its own thread; adding and removing items,
/// signalling, `perform`, `submit`, `stop` and `wakeUp` are thread-safe.
///
/// ```swift
/// let loop = Loop.current
/// let source = LoopSource(label: "work") { print("performed") }
/// loop.add(source, mode: .default)
/// source.signal()
/// let result = loop.run(mode: .default, timeout: .seconds(1), returnAfterSourceHandled: true)
/// // result == .handledSource
/// ```
public final class Loop: @unchecked Sendable {
    // Sendable: `guarded` is only touched with `lock` held, `owned` only on the owner thread
    // (checked in debug builds), the instrumentation sits behind its own `Locked`, and the
    // rest is immutable or atomic.

    let lock = PThreadMutex()
    /// The loop's clock: real monotonic time, or a virtual clock whose waits jump.
    public let clock: any LoopClock
    let virtualClock: VirtualClock?
    /// The clock is `MonotonicClock`: the pass reads it directly (`clockNanoseconds()`), not through the
    /// existential.
    let usesMonotonicClock: Bool
    /// Unique for the process's lifetime: timers name the loop holding them by it.
    let identity = ProcessCounters.itemID()
    let owner: pthread_t
    let ownerTID: Int64
    let ownerName: String
    /// The main thread's loop: the async queue is `DispatchQueue.main` (R4a).
    let isMainLoop: Bool
    /// Registry loops are torn down at thread exit (W6); detached loops at deinit.
    let isRegistered: Bool

    /// Everything other threads may read or change: only with `lock` held.
    /// `@exclusivity(unchecked)`: the lock serialises access; the run-time checks would cost a
    /// third of a pass's instructions.
    @exclusivity(unchecked) var guarded = LoopGuardedState()
    /// What only the owner thread touches (checked with `assertOwnerThread` in debug builds).
    /// `@exclusivity(unchecked)`: confined to one thread; read on every callout.
    @exclusivity(unchecked) var owned = LoopOwnedState()

    /// The wake eventfd was written and not yet read; lets a pass skip the read otherwise.
    /// Written under `lock`; atomic so the top of a pass can test it without the lock.
    var wakePending: Bool {
        get { wakePendingFlag.load(ordering: .acquiring) }
        set { wakePendingFlag.store(newValue, ordering: .releasing) }
    }

    let passCounter = Atomic<UInt64>(0)
    let wakePendingFlag = Atomic<Bool>(false)
    /// A `wakeUp()` whose eventfd write failed (reported): the next wait returns at once as
    /// woken instead of sleeping through it (see `takeLostWakeUp`).
    let wakeUpLost = Atomic<Bool>(false)
    /// `wakeUp()` calls between their decision (under `lock`) and the end of their eventfd write.
    let wakeWritesInFlight = Atomic<Int>(0)
    /// A pending wake-up the owner thread noted instead of writing the eventfd (see
    /// `decideWakeUpLocked`). Written under `lock`; atomic so the wait can test it without it.
    let wakeNoted = Atomic<Bool>(false)
    /// Mirror of `!blocks.isEmpty`, written under `lock` with every change of `blocks`, so a
    /// pass with no pending block skips the lock (B3).
    let hasBlocks = Atomic<Bool>(false)
    /// Mirror of `!asyncPending.isEmpty` (non-main loops), written under `lock` with every
    /// change of `asyncPending`, so the pass's async probe skips the lock.
    let hasAsyncPending = Atomic<Bool>(false)
    /// Bumped under `lock` by everything that can change L0 or L1 of a run that is starting:
    /// `stop()`, `stop(mode:)`, `addCommonMode`, teardown. A run settles L0/L1 before its Entry
    /// observers and re-checks under the lock after them only if this moved.
    let controlEpoch = Atomic<UInt64>(0)

    /// See `controlEpoch`. Lock held.
    @inline(__always)
    func bumpControlEpoch() { controlEpoch.wrappingAdd(1, ordering: .releasing) }

    /// The sink and interceptor as configured (any thread, under its own lock) and the version
    /// the owner thread last copied into `activeSink` / `activeInterceptor`.
    let instrumentation = Locked(Instrumentation())
    /// Broadcast (with `lock` held) when a wait begins and somebody is in `waitUntilWaiting`.
    let sleepStarted = PThreadCondition()
    let instrumentationVersion = Atomic<UInt64>(0)

    /// Passes of the run function (`__CFRunLoopRun`'s loop) made so far.
    public var passCount: UInt64 { passCounter.load(ordering: .relaxed) }

    /// A detached loop bound to the calling thread, on the given clock (tests, scenarios).
    /// `Loop.current` on this thread is unaffected.
    ///
    /// ```swift
    /// let clock = VirtualClock()
    /// let loop = Loop(clock: clock)
    /// ```
    ///
    /// Traps, with a message naming the failed call, when the loop's own descriptors cannot be
    /// created (the process is out of descriptors or memory); ``make(clock:)`` throws instead.
    public convenience init(clock: any LoopClock) {
        self.init(clock: clock, owner: pthread_self(), ownerTID: rlk_gettid(), registered: false,
                  isMain: false)
    }

    /// A detached loop like ``init(clock:)``, or ``LoopError/systemCall(_:)`` when its wake-up
    /// or async-queue descriptor cannot be created (EMFILE, ENFILE, ENOMEM; also reported as
    /// `loop.system-call-failed`). Nothing is left open when it throws.
    ///
    /// ```swift
    /// do {
    ///     let loop = try Loop.make(clock: VirtualClock())
    ///     print(loop.passCount)   // 0
    /// } catch {
    ///     print("no loop: \(error)")
    /// }
    /// ```
    public static func make(clock: any LoopClock) throws(LoopError) -> Loop {
        switch makeDescriptors(isMain: false) {
        case .success(let descriptors):
            return Loop(clock: clock, owner: pthread_self(), ownerTID: rlk_gettid(), registered: false,
                        isMain: false, descriptors: descriptors)
        case .failure(let failure):
            throw .systemCall(failure)
        }
    }

    /// A thread's loop (`Loop.current`, the main loop) or ``init(clock:)``: these cannot fail
    /// by their signature, so a loop without its descriptors stops the process with a message
    /// naming the call (as CF does when it cannot make its ports).
    convenience init(clock: any LoopClock, owner: pthread_t, ownerTID: Int64, registered: Bool, isMain: Bool) {
        switch Loop.makeDescriptors(isMain: isMain) {
        case .success(let descriptors):
            self.init(clock: clock, owner: owner, ownerTID: ownerTID, registered: registered, isMain: isMain,
                      descriptors: descriptors)
        case .failure(let failure):
            preconditionFailure("RunLoopKit: cannot create a loop's descriptors: \(failure) (Loop.make(clock:) throws instead)")
        }
    }

    /// The loop's wake-up eventfd and, except on the main loop, its async-queue eventfd; on a
    /// failure (reported) none is left open.
    static func makeDescriptors(isMain: Bool) -> Result<(wake: Int32, async: Int32), SystemCallError> {
        let wakeFD: Int32
        switch createDescriptor("eventfd", for: "a loop's wake-up descriptor", { rlk_eventfd_create() }) {
        case .success(let fd): wakeFD = fd
        case .failure(let failure): return .failure(failure)
        }
        guard !isMain else { return .success((wakeFD, -1)) }
        switch createDescriptor("eventfd", for: "a loop's async-queue descriptor", { rlk_eventfd_create() }) {
        case .success(let asyncFD):
            return .success((wakeFD, asyncFD))
        case .failure(let failure):
            closeDescriptor(wakeFD, "a loop's wake-up descriptor")
            return .failure(failure)
        }
    }

    private init(clock: any LoopClock, owner: pthread_t, ownerTID: Int64, registered: Bool, isMain: Bool,
                 descriptors: (wake: Int32, async: Int32)) {
        self.clock = clock
        self.virtualClock = clock as? VirtualClock
        self.usesMonotonicClock = clock is MonotonicClock
        self.owner = owner
        self.ownerTID = ownerTID
        self.ownerName = Loop.threadName(owner)
        self.isRegistered = registered
        self.isMainLoop = isMain
        guarded.wakeFD = descriptors.wake
        let base = RunFrame()
        base.ignoreWakeUps = true
        guarded.frames = [base]
        guarded.asyncFD = descriptors.async
        // M2: the default mode exists from the start (if its descriptors cannot be made, the
        // first add to it tries again).
        _ = modeStateLocked(.default, create: true)
    }

    deinit {
        if !guarded.tornDown { closeDescriptorsLocked() }
        reportUnrunJobs(takePendingJobsLocked())
        updateInstrumentation { $0 = Instrumentation() }   // no longer a loop with a sink
    }

    // MARK: Modes

    /// The mode of the innermost run, or nil when the loop is not running.
    public var currentMode: Loop.Mode? { lock.withLock { guarded.runningMode?.takeUnretainedValue().mode } }

    /// Every mode created so far, in creation order (modes are never removed, M1).
    public var allModes: [Loop.Mode] { lock.withLock { guarded.modeOrder } }

    /// The common modes; initially `[.default]` (M2).
    public var commonModes: Set<Loop.Mode> { lock.withLock { guarded.commonModeNames } }

    /// Makes `mode` common: it receives every item added to `.common`, now and later (M4).
    /// There is no way to make a mode uncommon again.
    ///
    /// ```swift
    /// loop.addCommonMode(.tracking)
    /// ```
    public func addCommonMode(_ mode: Loop.Mode) {
        guard mode != .common else { return }
        let scheduled: [LoopSource] = lock.withLock {
            guard !guarded.tornDown, !guarded.commonModeNames.contains(mode) else { return [] }
            // A mode that cannot be created now (reported) does not become common; calling
            // again tries again.
            let state = guarded.commonItems.isEmpty ? nil : modeStateLocked(mode, create: true)
            if !guarded.commonItems.isEmpty && state == nil { return [] }
            guarded.commonModeNames.insert(mode)
            guarded.modes[mode]?.guarded.isCommon = true
            bumpControlEpoch()
            guard let state else { return [] }
            return addCommonItemsLocked(to: state)
        }
        for source in scheduled { source.didJoin(self, modes: [mode]) }
    }

    /// The mode's state, created if asked (M1). Lock held.
    func modeStateLocked(_ mode: Loop.Mode, create: Bool) -> ModeState? {
        if guarded.tornDown { return nil }  // R2: a torn-down loop takes nothing
        if let last = lookupUnretainedLocked(mode) { return last.takeUnretainedValue() }
        // `.common` is never a mode of its own (M3): no hashing of its name.
        if mode.isCommonModes { return nil }
        if let state = guarded.modes[mode] {
            guarded.lastLookup = Unmanaged.passUnretained(state)
            return state
        }
        guard create else { return nil }
        guard case .success(let state) = makeModeLocked(mode) else { return nil }
        return state
    }

    /// Creates `mode` (M1), or records and reports why it cannot exist now (its descriptors
    /// could not be made); a later call tries again. Lock held; `mode` is not `.common` and
    /// does not exist yet.
    func makeModeLocked(_ mode: Loop.Mode) -> Result<ModeState, SystemCallError> {
        switch ModeState.make(mode: mode, wakeFD: guarded.wakeFD, virtualClock: virtualClock != nil) {
        case .success(let state):
            guarded.unavailableModes[mode] = nil
            state.guarded.isCommon = guarded.commonModeNames.contains(mode)
            guarded.modes[mode] = state
            guarded.modeOrder.append(mode)
            return .success(state)
        case .failure(let failure):
            guarded.unavailableModes[mode] = failure
            Diagnostics.report(.error, .modeUnavailable,
                               "mode '\(mode)' cannot be created: \(failure); items added to it are refused and runs of it return .finished until it can")
            return .failure(failure)
        }
    }

    /// The last looked-up mode if it is `mode`, without a retain (see `lastLookup`). Lock held.
    @inline(__always)
    func lookupUnretainedLocked(_ mode: Loop.Mode) -> Unmanaged<ModeState>? {
        guard let last = guarded.lastLookup, last._withUnsafeGuaranteedRef({ $0.mode == mode }) else { return nil }
        return last
    }

    // MARK: Stop and wake-up (W1–W4)

    /// Stops the innermost run (W1); a no-op when the loop is not running. Any thread.
    ///
    /// ```swift
    /// DispatchQueue.global().async { loop.stop() }
    /// ```
    public func stop() {
        let running = lock.withLock { () -> Bool in
            guard guarded.runningMode != nil else { return false }
            guarded.frames[guarded.depth].stopped = true
            bumpControlEpoch()
            return true
        }
        if running { wakeUp() }
    }

    /// Stops the next run of `mode` — now, if it is running, or the next one otherwise (W2:
    /// sticky until consumed). Creates the mode. Any thread.
    public func stop(mode: Loop.Mode) {
        let known = lock.withLock { () -> Bool in
            guard let state = modeStateLocked(mode, create: true) else { return false }
            state.guarded.stopped = true
            bumpControlEpoch()
            return true
        }
        if known { wakeUp() }
    }

    /// Wakes the loop if it is sleeping or about to sleep (W3). Ignored when the loop is not
    /// running and between a wake and the start of the next pass. Any thread.
    ///
    /// ```swift
    /// source.signal(); loop.wakeUp()
    /// ```
    public func wakeUp() {
        if InputReporting.isActive { reportInput(.wakeUp, label: "") }
        // The decision and its record are made under the lock (W3); the eventfd write comes
        // after it. Written under the lock, the write wakes the loop thread, which on the same
        // CPU preempts this thread and at once blocks on the lock this thread still holds: two
        // extra context switches per wake-up. A write that lands late, after the run it was
        // meant for has ended, is recognised as stale by its serial (see `wait`).
        writeWakeUp(lock.withLock { decideWakeUpLocked() })
    }

    /// W3's decision for a wake-up: ignored (-1) when the loop is torn down or ignores wake-ups
    /// now; otherwise recorded for the innermost run, and the wake-up descriptor to write once
    /// the lock is released is returned (see `writeWakeUp`). Lock held.
    ///
    /// On the loop's own thread nothing is written: that thread is not waiting, and its next
    /// wait takes the noted wake-up (`takeNotedWakeUp`) before it would block, so the wake-up
    /// costs no write, no epoll return and no read. While one is noted, other threads do not
    /// write either (the same next wait takes theirs). A wake-up already written, or failed
    /// (`wakeUpLost`), stays as it is and only moves to the innermost run.
    @inline(__always)
    func decideWakeUpLocked() -> Int32 {
        guard !guarded.tornDown, !guarded.frames[guarded.depth].ignoreWakeUps else { return -1 }
        guarded.wakeSerial = guarded.frames[guarded.depth].serial
        if wakeNoted.load(ordering: .relaxed) { return -1 }
        if isOwnerThread {
            if !wakePending {
                wakePending = true
                wakeNoted.store(true, ordering: .releasing)
            }
            return -1
        }
        wakePending = true
        wakeWritesInFlight.wrappingAdd(1, ordering: .relaxed)
        return guarded.wakeFD
    }

    /// The wake-up the owner thread noted without a write (`decideWakeUpLocked`), taken by
    /// the wait that would otherwise block on it: nil when none is noted, else whether it is
    /// for the run `serial` (one noted for an earlier run is stale and dropped, as a stale
    /// write is).
    func takeNotedWakeUp(serial: UInt64) -> Bool? {
        lock.withLock { takeNotedWakeUpLocked(serial: serial) }
    }

    /// `takeNotedWakeUp` with the lock held.
    @inline(__always)
    func takeNotedWakeUpLocked(serial: UInt64) -> Bool? {
        guard wakeNoted.load(ordering: .relaxed) else { return nil }
        wakeNoted.store(false, ordering: .relaxed)
        wakePending = false
        return guarded.wakeSerial == serial
    }

    /// Writes the wake-up descriptor `decideWakeUpLocked` returned (nothing for -1); a failed
    /// write is reported and makes the next wait return at once (see `takeLostWakeUp`). Lock
    /// not held.
    @inline(__always)
    func writeWakeUp(_ fd: Int32) {
        guard fd >= 0 else { return }
        if valueOrErrno("write(eventfd)", { rlk_eventfd_signal(fd) })
            .reportingFailure(.systemCallFailed, "waking the loop (its next wait polls instead)") == nil {
            wakeUpLost.store(true, ordering: .releasing)
        }
        wakeWritesInFlight.wrappingSubtract(1, ordering: .releasing)
    }

    /// Whether a wake-up whose write failed is for the run `serial`; consumes it either way,
    /// with the pending wake-up it stood for (one written for an earlier run is stale, as in
    /// `wait`). A wait already blocked when the write failed sleeps until its next event.
    func takeLostWakeUp(serial: UInt64) -> Bool {
        lock.withLock {
            guard wakeUpLost.exchange(false, ordering: .acquiringAndReleasing) else { return false }
            guard wakePending else { return false }
            wakePending = false
            return guarded.wakeSerial == serial
        }
    }

    /// True while the loop is in its wait (after BW, before AW), including a polling wait (W4).
    public var isWaiting: Bool { lock.withLock { guarded.sleeping } }

    /// Blocks the calling thread — never the loop's own — until the loop is in its wait
    /// (``isWaiting``), or until `timeout` passes. Returns whether it is waiting. For tests and
    /// tools that must act on a sleeping loop: no polling, one condition wait.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// print(loop.waitUntilWaiting(timeout: .zero))   // false: nobody runs it
    /// ```
    public func waitUntilWaiting(timeout: Duration) -> Bool {
        precondition(!isOwnerThread, "Loop.waitUntilWaiting called on the loop's own thread, which would never wake")
        let deadline = Nanoseconds.add(MonotonicClock.shared.nowNanoseconds, Nanoseconds.from(timeout))
        return lock.withLock {
            guarded.sleepWatchers += 1
            defer { guarded.sleepWatchers -= 1 }
            while !guarded.sleeping {
                guard sleepStarted.wait(lock, untilMonotonicNanoseconds: deadline) else { return guarded.sleeping }
            }
            return true
        }
    }

    // MARK: Thread confinement

    func checkOwnerThread(_ function: String) {
        guard pthread_equal(pthread_self(), owner) == 0 else { return }
        let tid = rlk_gettid()
        let name = Loop.threadName(pthread_self())
        preconditionFailure(
            "\(function) called on thread \(tid) '\(name)', but this loop belongs to thread \(ownerTID) '\(ownerName)'. A loop can only be run by its own thread; use Loop.current there.")
    }

    static func threadName(_ thread: pthread_t) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard rlk_thread_name(UInt(thread), &buffer, buffer.count) == 0 else { return "?" }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Teardown (W6)

    /// Closes every descriptor. Lock held or object unreachable.
    func closeDescriptorsLocked() {
        for state in guarded.modes.values { state.closeDescriptors() }
        // A wakeUp() that decided before the teardown may still be writing the descriptor;
        // closing it first could let that write hit a reused descriptor number.
        while wakeWritesInFlight.load(ordering: .acquiring) != 0 { sched_yield() }
        if guarded.wakeFD >= 0 { closeDescriptor(guarded.wakeFD, "a loop's wake-up descriptor"); guarded.wakeFD = -1 }
        if guarded.asyncFD >= 0 { closeDescriptor(guarded.asyncFD, "a loop's async-queue descriptor"); guarded.asyncFD = -1 }
        guarded.tornDown = true
        bumpControlEpoch()
    }
}


/// Items added to `.common` (CF's `_commonModeItems`).
struct CommonItems {
    var observers: [LoopObserver] = []
    var sources0: [LoopSource] = []
    var ports: [LoopPortSource] = []
    var files: [LoopFileSource] = []
    var timers: [LoopTimer] = []
    var isEmpty: Bool {
        observers.isEmpty && sources0.isEmpty && ports.isEmpty && files.isEmpty && timers.isEmpty
    }
}

/// Per-run data (R5) plus the pass's reusable scratch buffers, one set per nesting depth so a
/// steady-state pass allocates nothing and a nested run cannot disturb the outer snapshot.
final class RunFrame: @unchecked Sendable {  // stopped/serial/ignoreWakeUps: loop lock; the rest: loop thread
    var stopped: Bool {
        _read { yield control.pointee.stopped }
        _modify { yield &control.pointee.stopped }
    }
    /// W3: the run ignores wake-ups now (from a wake to the top of the next pass). Written by
    /// the loop thread and read by `wakeUp()`, both only with the loop's lock held: a producer
    /// that reads it set has queued its work before the loop clears it, so the loop's next look
    /// at its queues, which comes after that critical section, sees the work. (An atomic flipped
    /// outside the lock let the two threads miss each other's stores: issue 26.)
    var ignoreWakeUps: Bool {
        _read { yield control.pointee.ignoreWakeUps }
        _modify { yield &control.pointee.ignoreWakeUps }
    }
    /// Identifies the run using this frame (loop lock).
    var serial: UInt64 {
        _read { yield control.pointee.serial }
        _modify { yield &control.pointee.serial }
    }
    /// What other threads reach under the loop's lock (`stop()` sets `stopped`), apart from
    /// `scratch`, which the loop thread changes without the lock: one allocation each, so an
    /// access to one never overlaps an access to the other.
    let control: UnsafeMutablePointer<Control>

    struct Control {
        var stopped = false
        var serial: UInt64 = 0
        var ignoreWakeUps = false
    }
    /// Behind a pointer so the hot per-item appends and reads skip Swift's dynamic exclusivity
    /// checks on class properties (they were a third of a pass's instructions); only the loop
    /// thread touches it, one step at a time.
    let scratch: UnsafeMutablePointer<Scratch>
    /// The async descriptor this run took out of its mode's epoll set, or -1 (L1). Loop thread.
    var removedAsyncPort: Int32 {
        _read { yield scratch.pointee.removedAsyncPort }
        _modify { yield &scratch.pointee.removedAsyncPort }
    }

    struct Scratch {
        var removedAsyncPort: Int32 = -1
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
        control = .allocate(capacity: 1)
        control.initialize(to: Control())
        scratch = .allocate(capacity: 1)
        scratch.initialize(to: Scratch(readyTokens: .allocate(capacity: RunFrame.readyCapacity),
                                       readyFlags: .allocate(capacity: RunFrame.readyCapacity)))
    }

    deinit {
        control.deinitialize(count: 1)
        control.deallocate()
        scratch.pointee.readyTokens.deallocate()
        scratch.pointee.readyFlags.deallocate()
        scratch.deinitialize(count: 1)
        scratch.deallocate()
    }

    /// Takes the snapshot of `state`'s current observers (none if it has none) and returns the
    /// one held before, for the caller to release after the loop's lock. Loop thread, lock held.
    @inline(__always)
    func holdObserverSnapshotLocked(_ state: ModeState) -> ObserverSnapshot? {
        let snapshot = state.observerSnapshotLocked()
        scratch.pointee.observersHeldVersion = state.observersVersion.load(ordering: .relaxed)
        scratch.pointee.observerEntries = snapshot?.entries
        scratch.pointee.observerStarts = snapshot?.starts
        let previous = scratch.pointee.observerSnapshot
        scratch.pointee.observerSnapshot = snapshot
        return previous
    }

    /// Drops the run's observer snapshot (O5), so observers removed meanwhile are released
    /// with it. Loop thread, end of a run, lock released.
    @inline(__always)
    func releaseObserverSnapshot() {
        scratch.pointee.observersHeldVersion = 0
        scratch.pointee.observerEntries = nil
        scratch.pointee.observerStarts = nil
        if scratch.pointee.observerSnapshot != nil { scratch.pointee.observerSnapshot = nil }
    }
}

struct Source0Pick {
    let source: LoopSource
    let order: Int
    let stamp: UInt64
}

/// A block waiting for a matching mode (B1).
struct PendingBlock {
    enum Target {
        case one(Loop.Mode), several([Loop.Mode])

        /// `.one` for a single mode.
        init(modes: [Loop.Mode]) { self = modes.count == 1 ? .one(modes[0]) : .several(modes) }

        /// The modes named.
        var modes: [Loop.Mode] {
            switch self {
            case .one(let mode): return [mode]
            case .several(let modes): return modes
            }
        }
    }
    /// A closure performed with `perform`, or a Swift Concurrency job enqueued on the loop as
    /// an executor (no closure allocated for it): as a serial executor (an actor's job) or as a
    /// task executor (a task that prefers the loop, running nonisolated code).
    enum Work {
        case closure(@Sendable () -> Void)
        case job(UnownedJob)
        case taskJob(UnownedJob)
    }
    let target: Target
    let label: String
    let work: Work

    init(target: Target, label: String, work: @escaping @Sendable () -> Void) {
        self.target = target
        self.label = label
        self.work = .closure(work)
    }

    init(target: Target, label: String, job: UnownedJob, asTaskExecutor: Bool) {
        self.target = target
        self.label = label
        self.work = asTaskExecutor ? .taskJob(job) : .job(job)
    }

    /// B2: the block's mode is the current mode, or `.common` and the current mode is common.
    func matches(_ mode: Loop.Mode, isCommon: Bool) -> Bool {
        targets(mode) || (isCommon && targetsCommon)
    }

    /// Whether the block names `mode` itself.
    @inline(__always)
    func targets(_ mode: Loop.Mode) -> Bool {
        switch target {
        case .one(let m): return m == mode
        case .several(let ms): return ms.contains(mode)
        }
    }

    /// Whether this is a Swift Concurrency job.
    var job: UnownedJob? {
        switch work {
        case .job(let job), .taskJob(let job): return job
        case .closure: return nil
        }
    }

    /// Whether the block names the common-modes pseudo-mode.
    @inline(__always)
    var targetsCommon: Bool {
        switch target {
        case .one(let m): return m == .common
        case .several(let ms): return ms.contains(.common)
        }
    }
}

struct AsyncWork {
    let label: String
    let work: @Sendable () -> Void
}

extension Array {
    /// Drops the elements from `count` on, keeping the capacity. For the short scratch
    /// buffers of a pass this is much cheaper than `removeAll(keepingCapacity:)`, which goes
    /// through the generic `replaceSubrange`.
    @inline(__always)
    mutating func truncate(to count: Int) {
        while self.count > count { removeLast() }
    }
}
