import RunLoopDiagnostics
import PThreads
import CRunLoopShims
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A run loop with CFRunLoop's semantics (see `Docs/RunLoop.md`; the rule ids in comments are
/// defined in `Docs/Rules.md`).
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
public final class Loop: Sendable {

    /// The lock, and through it the state other threads reach (see `LoopLock`).
    let lock: LoopLock
    /// The queues' lock-free mirrors (see `LoopMirrors.swift`).
    let mirrors = LoopMirrors()
    /// The wake-up protocol's lock-free flags (see `WakeUp.swift`).
    let wakeUpFlags = WakeUpFlags()
    /// The loop's clock: real monotonic time, or a virtual clock whose waits jump.
    public let clock: any LoopClock
    let virtualClock: VirtualClock?
    /// The clock is `MonotonicClock`: the pass reads it directly (`clockNanoseconds()`), not
    /// through the existential.
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

    /// What only the owner thread touches (checked with `assertOwnerThread` in debug builds).
    /// `nonisolated(unsafe)`, `@exclusivity(unchecked)`: confined to that one thread; read on
    /// every callout.
    @exclusivity(unchecked) nonisolated(unsafe) var owned = LoopOwnedState()

    /// L3's count of passes: written by the owner thread only (`countPass`), read by any.
    let passCounter = Atomic<UInt64>(0)

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
        let (descriptors, raised) = Loop.makeDescriptors(isMain: false)
        raised.report()
        switch descriptors {
        case .success(let descriptors):
            self.init(clock: clock, owner: pthread_self(), ownerTID: rlk_gettid(), registered: false, isMain: false,
                      descriptors: descriptors)
        case .failure(let failure):
            Loop.stopForMissingDescriptors(failure)
        }
        makeDefaultMode().report()
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
        let (made, raised) = holdingReports(clock: clock, owner: pthread_self(), ownerTID: rlk_gettid(),
                                            registered: false, isMain: false)
        raised.report()
        switch made {
        case .success(let loop): return loop
        case .failure(let failure): throw .systemCall(failure)
        }
    }

    /// A new loop and what its creation raised, not yet reported (a descriptor that could not
    /// be created); or, when the loop's own descriptors cannot be made, the failure, with
    /// nothing left open. The registry registers a thread's loop before it reports: a
    /// diagnostics handler that asks for `Loop.current` then gets this loop, where it would
    /// otherwise make another, which fails the same way and reports again, without end.
    static func holdingReports(clock: any LoopClock, owner: pthread_t, ownerTID: Int64, registered: Bool,
                               isMain: Bool) -> (made: Result<Loop, SystemCallError>, raised: DeferredDiagnostics) {
        let (descriptors, raised) = makeDescriptors(isMain: isMain)
        switch descriptors {
        case .success(let descriptors):
            let loop = Loop(clock: clock, owner: owner, ownerTID: ownerTID, registered: registered, isMain: isMain,
                            descriptors: descriptors)
            return (.success(loop), loop.makeDefaultMode())
        case .failure(let failure):
            return (.failure(failure), raised)
        }
    }

    /// A thread's loop (`Loop.current`, the main loop) or ``init(clock:)`` cannot fail by its
    /// signature: a loop without its descriptors stops the process with a message naming the
    /// call (as CF does when it cannot make its ports).
    static func stopForMissingDescriptors(_ failure: SystemCallError) -> Never {
        preconditionFailure("RunLoopKit: cannot create a loop's descriptors: \(failure) (Loop.make(clock:) throws instead)")
    }

    /// The loop's wake-up eventfd and, except on the main loop, its async-queue eventfd; on a
    /// failure none is left open. What a failure raised comes back unreported.
    static func makeDescriptors(isMain: Bool) -> (made: Result<(wake: Descriptor, async: Descriptor?), SystemCallError>,
                                                  raised: DeferredDiagnostics) {
        var raised = DeferredDiagnostics()
        func make(_ what: String) -> Result<Descriptor, SystemCallError> {
            let made = makeDescriptor("eventfd", for: what, { rlk_eventfd_create() })
            if let failure = made.failure { raised.append(failure) }
            return made.value
        }
        let wake: Descriptor
        switch make("a loop's wake-up descriptor") {
        case .success(let fd): wake = fd
        case .failure(let failure): return (.failure(failure), raised)
        }
        guard !isMain else { return (.success((wake, nil)), raised) }
        switch make("a loop's async-queue descriptor") {
        case .success(let async):
            return (.success((wake, async)), raised)
        case .failure(let failure):
            if let closeFailure = closing(wake.raw, "a loop's wake-up descriptor").failure { raised.append(closeFailure) }
            return (.failure(failure), raised)
        }
    }

    private init(clock: any LoopClock, owner: pthread_t, ownerTID: Int64, registered: Bool, isMain: Bool,
                 descriptors: (wake: Descriptor, async: Descriptor?)) {
        self.clock = clock
        self.virtualClock = clock as? VirtualClock
        self.usesMonotonicClock = clock is MonotonicClock
        self.owner = owner
        self.ownerTID = ownerTID
        self.ownerName = Loop.threadName(owner)
        self.isRegistered = registered
        self.isMainLoop = isMain
        var initial = LoopGuardedState()
        initial.wakeUp.descriptor = descriptors.wake
        initial.asyncFD = descriptors.async
        // frames[0] stands for "not running": it ignores wake-ups (W3).
        let base = RunFrame()
        base.controlStorage.unshared.pointee.ignoresWakeUps = true
        initial.addFrame(base)
        self.lock = LoopLock(guarding: initial)
    }

    /// M2: the default mode exists from the start (if its descriptors cannot be made, the first
    /// add to it tries again). Part of making the loop: what a failure raised comes back
    /// unreported, for the maker to report once the loop can be found (see `holdingReports`).
    private func makeDefaultMode() -> DeferredDiagnostics {
        let held = lock.lock()
        _ = modeState(.default, create: true, held)
        let raised = held.loop.deferredDiagnostics.take()
        held.unlock()
        return raised
    }

    deinit {
        let state = lock.unshared
        if !state.pointee.tornDown { closeDescriptors(of: state) }
        reportUnrunJobs(state.pointee.queues.blocks.filter { $0.job != nil })
        updateInstrumentation { $0 = Instrumentation() }   // no longer a loop with a sink
    }

    // MARK: Modes

    /// The mode of the innermost run, or nil when the loop is not running.
    public var currentMode: Loop.Mode? { lock.withLock { $0.loop.runningMode?.takeUnretainedValue().mode } }

    /// Every mode created so far, in creation order (modes are never removed, M1).
    public var allModes: [Loop.Mode] { lock.withLock { $0.loop.modeOrder } }

    /// The common modes; initially `[.default]` (M2).
    public var commonModes: Set<Loop.Mode> { lock.withLock { $0.loop.commonModeNames } }

    /// Makes `mode` common: it receives every item added to `.common`, now and later (M4).
    /// There is no way to make a mode uncommon again.
    ///
    /// ```swift
    /// loop.addCommonMode(.tracking)
    /// ```
    public func addCommonMode(_ mode: Loop.Mode) {
        guard mode != .common else { return }
        let scheduled: [LoopSource] = lock.withLockReporting { held in
            guard !held.loop.tornDown, !held.loop.commonModeNames.contains(mode) else { return [] }
            // A mode that cannot be created now (reported) does not become common; calling
            // again tries again.
            let needsMode = !held.loop.commonItems.isEmpty
            let state = needsMode ? modeState(mode, create: true, held) : nil
            if needsMode && state == nil { return [] }
            held.loop.commonModeNames.insert(mode)
            if let existing = held.loop.modes[mode] { held[existing].isCommon = true }
            controlChanged(held)
            guard let state else { return [] }
            return addCommonItems(to: state, held)
        }
        for source in scheduled { source.didJoin(self, modes: [mode]) }
    }

    /// The mode's state, created if asked (M1); nil for `.common` (M3), a torn-down loop (R2),
    /// a missing mode not to be created, or one whose creation failed (reported when the lock
    /// is released: a caller that creates releases it with `unlockReporting()`).
    func modeState(_ mode: Loop.Mode, create: Bool, _ held: borrowing LoopLock.Held) -> ModeState? {
        if held.loop.tornDown { return nil }
        if let last = lastLookedUp(mode, held) { return last.takeUnretainedValue() }
        // `.common` is never a mode of its own (M3): no hashing of its name.
        if mode.isCommonModes { return nil }
        if let state = held.loop.modes[mode] {
            held.loop.lastLookup = Unmanaged.passUnretained(state)
            return state
        }
        guard create else { return nil }
        guard case .success(let state) = makeMode(mode, held) else { return nil }
        return state
    }

    /// Creates `mode` (M1), or records why it cannot exist now (its descriptors could not be
    /// made) and defers its report to the lock's release; a later call tries again. `mode` is
    /// not `.common` and does not exist.
    func makeMode(_ mode: Loop.Mode, _ held: borrowing LoopLock.Held) -> Result<ModeState, SystemCallError> {
        guard let wake = held.loop.wakeUp.descriptor else { return .failure(SystemCallError(call: "eventfd", code: EBADF)) }
        switch ModeState.make(mode: mode, wakeFD: wake, virtualClock: virtualClock != nil, held) {
        case .success(let state):
            held.loop.unavailableModes[mode] = nil
            held[state].isCommon = held.loop.commonModeNames.contains(mode)
            held.loop.modes[mode] = state
            held.loop.modeOrder.append(mode)
            return .success(state)
        case .failure(let failure):
            held.loop.unavailableModes[mode] = failure
            held.deferReport(.error, .modeUnavailable,
                             "mode '\(mode)' cannot be created: \(failure); items added to it are refused and runs of it return .finished until it can")
            return .failure(failure)
        }
    }

    /// The last looked-up mode if it is `mode`, without a retain (see `lastLookup`).
    @inline(__always)
    func lastLookedUp(_ mode: Loop.Mode, _ held: borrowing LoopLock.Held) -> Unmanaged<ModeState>? {
        guard let last = held.loop.lastLookup, last._withUnsafeGuaranteedRef({ $0.mode == mode }) else { return nil }
        return last
    }

    // MARK: Stop: a run now, or a mode's next run (W1, W2)

    /// Stops the innermost run (W1); a no-op when the loop is not running. Any thread.
    ///
    /// ```swift
    /// DispatchQueue.global().async { loop.stop() }
    /// ```
    public func stop() {
        let running = lock.withLock { held -> Bool in
            guard held.loop.runningMode != nil else { return false }
            held[held.loop.innermostFrame].stopped = true
            controlChanged(held)
            return true
        }
        if running { wakeUp() }
    }

    /// Stops the next run of `mode` — now, if it is running, or the next one otherwise (W2:
    /// sticky until consumed). Creates the mode. Any thread.
    public func stop(mode: Loop.Mode) {
        let known = lock.withLockReporting { held -> Bool in
            guard let state = modeState(mode, create: true, held) else { return false }
            held[state].stopped = true
            controlChanged(held)
            return true
        }
        if known { wakeUp() }
    }

    // MARK: Waiting: isWaiting, and waiting for it (W4)

    /// True while the loop is in its wait (after BW, before AW), including a polling wait (W4).
    public var isWaiting: Bool { lock.withLock { $0.loop.sleeping } }

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
        return lock.withLock { held in
            held.loop.sleepWatchers += 1
            defer { held.loop.sleepWatchers -= 1 }
            while !held.loop.sleeping {
                guard lock.wait(on: sleepStarted, untilMonotonicNanoseconds: deadline, held) else { return held.loop.sleeping }
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

    // MARK: Teardown: at thread exit or tearDown() (W6)

    /// Closes every descriptor and marks the loop torn down; a failure is deferred to the
    /// lock's release.
    func closeDescriptors(_ held: borrowing LoopLock.Held) {
        closeDescriptors(modes: held.loop.modes.values, wake: held.loop.wakeUp.descriptor, async: held.loop.asyncFD) {
            $0.deferred(held)
        }
        held.loop.wakeUp.descriptor = nil
        held.loop.asyncFD = nil
        held.loop.tornDown = true
        controlChanged(held)
    }

    /// `closeDescriptors` for a loop going away: nobody else can reach it.
    private func closeDescriptors(of state: UnsafeMutablePointer<LoopGuardedState>) {
        closeDescriptors(modes: state.pointee.modes.values, wake: state.pointee.wakeUp.descriptor,
                         async: state.pointee.asyncFD) { $0.reported() }
        state.pointee.tornDown = true
    }

    /// Closes the modes' descriptors, then the loop's own; each failure goes to `route`.
    private func closeDescriptors(modes: some Sequence<ModeState>, wake: Descriptor?, async: Descriptor?,
                                  _ route: (Unreported<Void>) -> Void) {
        for mode in modes { mode.closeDescriptors(route) }
        // A wakeUp() that decided before the teardown may still be writing the descriptor;
        // closing it first could let that write hit a reused descriptor number.
        waitForWakeUpWrites()
        if let wake { route(closing(wake.raw, "a loop's wake-up descriptor")) }
        if let async { route(closing(async.raw, "a loop's async-queue descriptor")) }
    }
}
