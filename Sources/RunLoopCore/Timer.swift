import Synchronization

/// A timer (T1–T10): fires once, or repeatedly on a fixed grid, in the modes it was added to.
///
/// Timers fire only after the loop waited (L-b). A repeating timer that falls behind skips
/// the missed ticks and stays on its original grid (T5). Tolerance is honoured as on Darwin:
/// the loop may defer a wake by up to `min(tolerance, interval / 2)` to fire several timers
/// together (T8).
///
/// ```swift
/// let loop = Loop(clock: VirtualClock())
/// let tick = try LoopTimer(after: .milliseconds(500), clock: loop.clock, interval: .seconds(1),
///                          label: "tick") { timer in
///     print("tick at", timer.nextFireDate)
/// }
/// loop.add(tick, mode: .common)
/// ```
public final class LoopTimer: Sendable {
    public let label: String
    /// `sending`, not `Sendable`: only the thread of the one loop the timer is bound to calls
    /// it (`ItemCore.boundLoop`), never two threads at once; hence `nonisolated(unsafe)`.
    nonisolated(unsafe) let callout: (LoopTimer) -> Void
    let core = ItemCore()
    // The schedule: the date, whether the callout set one, the slots in modes' queues.
    //
    // Who may change it (the lock rule of the schedule): while modes of a loop hold the timer
    // (`scheduleLoop` names that loop), the thread holding that loop's lock; otherwise the
    // thread holding the timer's lock. The owner changes only with both locks held, when a mode
    // of a loop takes the timer or drops it, so one owner at a time writes. That lets the loop's
    // pass and a re-arm on the loop's thread take the loop's lock alone: a re-armed timer's pass
    // used to take the timer's lock twice more, two of its six lock round trips.

    /// The date currently scheduled, in clock nanoseconds (or firing, inside the callout: T5).
    /// Atomic, so any thread reads it without a lock (`nextFireDate`); written by the owner of
    /// the schedule (above) through `setFireDate`.
    var fireDate: UInt64 { fireDateStorage.load(ordering: .relaxed) }
    private let fireDateStorage: Atomic<UInt64>
    /// `setNextFireDate` was called during the callout: keep that date (T5). Written by the
    /// owner of the schedule; atomic, so a read never races (the pass reads it as owner).
    var rescheduledInCallout: Bool {
        get { rescheduledFlag.load(ordering: .relaxed) }
        set { rescheduledFlag.store(newValue, ordering: .relaxed) }
    }
    private let rescheduledFlag = Atomic<Bool>(false)
    /// One slot per mode holding the timer (`TimerQueue`). Written with both locks held (the
    /// loop's whose mode takes or drops the timer, and the timer's); read with either.
    /// `nonisolated(unsafe)` for that rule; `@exclusivity(unchecked)`: the locks serialise
    /// access, and every fire reads it twice.
    @exclusivity(unchecked) nonisolated(unsafe) var placements: [TimerSlot] = []
    /// The `identity` of the loop whose modes hold the timer, 0 when none: the owner of the
    /// schedule. Written with that loop's lock and the timer's held, as the timer joins the
    /// loop's first mode or leaves its last. So a thread holding loop L's lock that reads L's
    /// identity here knows L's modes hold the timer until it lets L's lock go. (A loop freed
    /// without tearing its modes down leaves its identity here; identities are never reused.)
    /// Read without a lock by `setNextFireDate` to choose the owner's path.
    let scheduleLoop = Atomic<UInt64>(0)
    /// Nanoseconds between fires; 0 for a one-shot timer.
    let intervalNs: UInt64
    /// Written under the timer's lock (`setTolerance`, which then re-sorts the timer under both
    /// locks); atomic, so the owner of the schedule reads it under the loop's lock alone.
    private let toleranceStorage: Atomic<UInt64>
    /// Inside its callout (T5). Written by the pass firing the timer; atomic, so `rearm` and
    /// `setNextFireDate` read it without a lock.
    var firing: Bool {
        get { firingFlag.load(ordering: .relaxed) }
        set { firingFlag.store(newValue, ordering: .relaxed) }
    }
    private let firingFlag = Atomic<Bool>(false)

    /// A timer first firing at `fireAt` on its loop's clock.
    ///
    /// - Parameters:
    ///   - fireAt: the first fire date on the loop's clock; a past date fires at the next
    ///     timer step (after a wait, L-b).
    ///   - interval: time between fires; `.zero` makes a one-shot timer. Intervals beyond CF's
    ///     limit (about 16 years) are clamped to it (T1). Negative throws.
    ///   - tolerance: how late the loop may fire it to fire several timers together (T8).
    ///     Negative throws.
    ///   - label: the name traces and diagnostics use.
    ///   - callout: called on the loop's thread with the timer at each fire.
    public init(fireAt: LoopInstant, interval: Duration = .zero, tolerance: Duration = .zero,
                label: String = "timer", _ callout: sending @escaping (LoopTimer) -> Void) throws(LoopError) {
        guard interval >= .zero else { throw LoopError.negativeDuration(interval, what: "LoopTimer interval") }
        guard tolerance >= .zero else { throw LoopError.negativeDuration(tolerance, what: "LoopTimer tolerance") }
        self.intervalNs = min(Nanoseconds.from(interval), Nanoseconds.intervalLimit)
        self.toleranceStorage = Atomic(Nanoseconds.from(tolerance))
        self.fireDateStorage = Atomic(fireAt.nanoseconds)
        self.label = label
        self.callout = callout
    }

    /// A timer first firing `delay` after `clock.now`; a negative delay means as soon as possible.
    public convenience init(after delay: Duration, clock: any LoopClock, interval: Duration = .zero,
                            tolerance: Duration = .zero, label: String = "timer",
                            _ callout: sending @escaping (LoopTimer) -> Void) throws(LoopError) {
        try self.init(fireAt: clock.now.advanced(by: max(delay, .zero)), interval: interval,
                      tolerance: tolerance, label: label, callout)
    }

    /// CF-style convenience in seconds: negative `interval` and `tolerance` clamp to 0 as CF
    /// clamps them (T1); NaN throws ``LoopError/notANumber(what:)``.
    public convenience init(fireAt: LoopInstant, interval: Double, tolerance: Double = 0,
                            label: String = "timer", _ callout: sending @escaping (LoopTimer) -> Void) throws(LoopError) {
        guard !interval.isNaN else { throw LoopError.notANumber(what: "LoopTimer interval") }
        guard !tolerance.isNaN else { throw LoopError.notANumber(what: "LoopTimer tolerance") }
        try self.init(fireAt: fireAt, interval: Seconds.duration(interval), tolerance: Seconds.duration(tolerance),
                      label: label, callout)
    }

    /// CF-style convenience in seconds: a timer first firing `delay` seconds after `clock.now`
    /// (negative: as soon as possible); negatives clamp to 0, NaN throws.
    public convenience init(after delay: Double, clock: any LoopClock, interval: Double = 0, tolerance: Double = 0,
                            label: String = "timer", _ callout: sending @escaping (LoopTimer) -> Void) throws(LoopError) {
        guard !delay.isNaN else { throw LoopError.notANumber(what: "LoopTimer delay") }
        try self.init(fireAt: clock.now.advanced(by: Seconds.duration(delay)), interval: interval,
                      tolerance: tolerance, label: label, callout)
    }

    /// The next fire date; inside the callout, the date being fired (T5).
    public var nextFireDate: LoopInstant { LoopInstant(nanoseconds: fireDate) }

    /// Moves the next fire (T6). A past date means "as soon as possible". Inside the timer's own
    /// callout the new date replaces the catch-up computation (T5).
    public func setNextFireDate(_ date: LoopInstant) {
        // The usual re-arm, on the thread of the loop holding the timer (its callout, or the
        // code driving that loop), takes that loop's lock alone: it owns the schedule.
        if Loop.moveTimerOnCurrentLoop(self, to: date.nanoseconds) { return }
        // Elsewhere: the loop whose modes hold the timer, found under the timer's lock, then
        // that loop's lock; again if the timer moved meanwhile. In no loop's modes, the
        // timer's lock alone (the lock rule of the schedule).
        while let loop = core.lock.withLock({ () -> Loop? in
            guard let loop = core.holdingLoopLocked else {
                setNextFireDateOwned(date.nanoseconds)   // the timer's lock owns the schedule
                return nil
            }
            return loop
        }) {
            // `withExtendedLifetime` is for the optimiser: without it, Swift 6.3 copies the
            // loop once more around the call, a retain and a release that take the slow path
            // on an object with weak references: about 100 instructions per re-arm (callgrind).
            if withExtendedLifetime(loop, { loop.moveTimer(self, to: date.nanoseconds) }) { return }
        }
    }

    /// The new date of `setNextFireDate`, kept by a callout in progress (T5). Call as the
    /// owner of the schedule.
    @inline(__always)
    func setNextFireDateOwned(_ date: UInt64) {
        setFireDate(date)
        if firing { rescheduledInCallout = true }
    }

    /// Stores the date. Call as the owner of the schedule (the lock rule above).
    @inline(__always)
    func setFireDate(_ date: UInt64) { fireDateStorage.store(date, ordering: .relaxed) }

    /// Time between fires (`.zero` for a one-shot timer).
    public var interval: Duration { LoopInstant.duration(nanoseconds: intervalNs) }

    /// Requested tolerance; the effective value is `min(tolerance, interval / 2)` for repeating
    /// timers (Darwin's rule, T8). Change it with ``setTolerance(_:)``.
    public var tolerance: Duration { LoopInstant.duration(nanoseconds: toleranceStorage.load(ordering: .relaxed)) }

    /// Changes the tolerance (T8); negative throws and changes nothing.
    public func setTolerance(_ tolerance: Duration) throws(LoopError) {
        guard tolerance >= .zero else { throw LoopError.negativeDuration(tolerance, what: "LoopTimer tolerance") }
        let loop: Loop? = core.lock.withLock {
            toleranceStorage.store(Nanoseconds.from(tolerance), ordering: .relaxed)
            return core.firstLoopLocked
        }
        guard let loop else { return }
        withExtendedLifetime(loop) { loop.reposition(self) }   // as in setNextFireDate
    }

    /// The tolerance the loop applies, in nanoseconds.
    var effectiveToleranceNs: UInt64 {
        let toleranceNs = toleranceStorage.load(ordering: .relaxed)
        return intervalNs > 0 ? min(toleranceNs, intervalNs / 2) : toleranceNs
    }

    /// Adds `slot` as a mode of loop `slot.loopID` takes the timer, with that loop's lock held:
    /// the loop owns the schedule from now on. Returns the date and tolerance to queue it at.
    func join(_ slot: TimerSlot) -> (date: UInt64, tolerance: UInt64) {
        core.lock.withLock {
            placements.removeAll { $0.loopID != slot.loopID }  // left by a loop freed without tear-down
            placements.append(slot)
            scheduleLoop.store(slot.loopID, ordering: .relaxed)
            return (fireDate, effectiveToleranceNs)
        }
    }

    /// Takes out the slot of mode `modeID` of loop `loopID`, with that loop's lock held; once
    /// the loop's last mode has dropped the timer, the timer's lock owns the schedule again.
    func leave(modeID: UInt64, ofLoop loopID: UInt64) -> TimerSlot? {
        core.lock.withLock {
            guard let index = placements.firstIndex(where: { $0.modeID == modeID }) else { return nil }
            let slot = placements.remove(at: index)
            if !placements.contains(where: { $0.loopID == loopID }) { scheduleLoop.store(0, ordering: .relaxed) }
            return slot
        }
    }

    /// Whether this loop owns the schedule: its modes hold the timer, and keep it while the
    /// caller holds its lock (`held`), so the caller may change the schedule.
    @inline(__always)
    func isScheduled(in loop: Loop, _ held: borrowing LoopLock.Held) -> Bool {
        scheduleLoop.load(ordering: .relaxed) == loop.identity
    }

    /// Calls `body` with each of the timer's slots in the modes of the loop `loopID`, and
    /// returns whether there was one. The slots are lent, not retained: `placements` holds
    /// them, and `body` must not change it. Call with `core.lock` held, or the lock of the
    /// loop `loopID` when that loop owns the schedule (the rule of `placements`). Mutable access, so
    /// that the array is not retained around `body` (it is never shared: no copy is made).
    @inline(__always)
    func forEachSlotLocked(ofLoop loopID: UInt64, _ body: (TimerSlot) -> Void) -> Bool {
        placements.withUnsafeMutableBufferPointer { slots in
            var found = false
            for index in slots.indices {
                Unmanaged.passUnretained(slots[index])._withUnsafeGuaranteedRef { slot in
                    guard slot.loopID == loopID else { return }
                    found = true
                    body(slot)
                }
            }
            return found
        }
    }

    public var isValid: Bool { core.isValid }

    /// Stops the timer and removes it from every mode (T7); allowed inside its own callout.
    public func invalidate() {
        guard let loops = core.invalidate() else { return }
        for loop in loops { loop.purgeItem(self) }
    }
}
