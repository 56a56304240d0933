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
    /// The date currently scheduled, in clock nanoseconds (or firing, inside the callout: T5).
    ///
    /// The lock rule of `fireDate`, `placements` and `rescheduledInCallout` (hence
    /// `nonisolated(unsafe)`): read and written with `core.lock` held; and while modes of a loop
    /// hold the timer, written only with that loop's lock held as well, so that the loop's pass
    /// may read them, and write `rescheduledInCallout`, under its own lock alone (`startFiring`,
    /// the check before a callout). Every writer takes the loop's lock before the timer's (the
    /// lock order), through `Loop.moveTimer`, `ModeItem.insert`/`erase` or the pass.
    nonisolated(unsafe) var fireDate: UInt64
    /// Nanoseconds between fires; 0 for a one-shot timer.
    let intervalNs: UInt64
    private nonisolated(unsafe) var toleranceNs: UInt64
    /// Inside its callout (T5). Written under `core.lock`; atomic so the pass and `rearm` read
    /// it without the timer's lock.
    var firing: Bool {
        get { firingFlag.load(ordering: .relaxed) }
        set { firingFlag.store(newValue, ordering: .relaxed) }
    }
    private let firingFlag = Atomic<Bool>(false)
    /// One slot per mode holding the timer (`TimerQueue`); the lock rule of `fireDate`.
    /// `@exclusivity(unchecked)`: the locks serialise access; every fire reads it twice.
    @exclusivity(unchecked) nonisolated(unsafe) var placements: [TimerSlot] = []
    /// `setNextFireDate` was called during the callout: keep that date (T5). The lock rule of
    /// `fireDate`.
    nonisolated(unsafe) var rescheduledInCallout = false
    /// The `identity` of the loop the timer was last added to, 0 before. Read without a lock
    /// by `setNextFireDate` to choose its path on that loop's own thread; only a hint, which
    /// that path checks again under both locks.
    let homeLoopHint = Atomic<UInt64>(0)

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
        self.toleranceNs = Nanoseconds.from(tolerance)
        self.fireDate = fireAt.nanoseconds
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
    public var nextFireDate: LoopInstant { LoopInstant(nanoseconds: core.lock.withLock { fireDate }) }

    /// Moves the next fire (T6). A past date means "as soon as possible". Inside the timer's own
    /// callout the new date replaces the catch-up computation (T5).
    public func setNextFireDate(_ date: LoopInstant) {
        // The usual re-arm, on the thread of the loop holding the timer (its callout, or the
        // code driving that loop), takes the loop's lock and the timer's once each.
        if Loop.moveTimerOnCurrentLoop(self, to: date.nanoseconds) { return }
        // Elsewhere: the loop whose modes hold the timer, found under the timer's lock, then
        // both locks (the lock rule of `fireDate`); again if the timer moved to another loop
        // meanwhile. In no loop's modes, the timer's lock alone.
        while let loop = core.lock.withLock({ () -> Loop? in
            guard let loop = core.holdingLoopLocked else {
                setFireDateLocked(date.nanoseconds)
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

    /// The new date of `setNextFireDate`, kept by a callout in progress (T5). Call with
    /// `core.lock` held, and the lock of the loop whose modes hold the timer, if any.
    @inline(__always)
    func setFireDateLocked(_ date: UInt64) {
        fireDate = date
        if firing { rescheduledInCallout = true }
    }

    /// Time between fires (`.zero` for a one-shot timer).
    public var interval: Duration { LoopInstant.duration(nanoseconds: intervalNs) }

    /// Requested tolerance; the effective value is `min(tolerance, interval / 2)` for repeating
    /// timers (Darwin's rule, T8). Change it with ``setTolerance(_:)``.
    public var tolerance: Duration { LoopInstant.duration(nanoseconds: core.lock.withLock { toleranceNs }) }

    /// Changes the tolerance (T8); negative throws and changes nothing.
    public func setTolerance(_ tolerance: Duration) throws(LoopError) {
        guard tolerance >= .zero else { throw LoopError.negativeDuration(tolerance, what: "LoopTimer tolerance") }
        let loop: Loop? = core.lock.withLock {
            toleranceNs = Nanoseconds.from(tolerance)
            return core.firstLoopLocked
        }
        guard let loop else { return }
        withExtendedLifetime(loop) { loop.reposition(self) }   // as in setNextFireDate
    }

    /// The tolerance the loop applies, in nanoseconds. Call with core.lock held.
    var effectiveToleranceNsLocked: UInt64 {
        intervalNs > 0 ? min(toleranceNs, intervalNs / 2) : toleranceNs
    }

    /// Calls `body` with each of the timer's slots in the modes of the loop `loopID`, and
    /// returns whether there was one. The slots are lent, not retained: `placements` holds
    /// them, and `body` must not change it. Call with `core.lock` held, or the lock of the
    /// loop `loopID` (the lock rule of `fireDate`). Mutable access, so
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
