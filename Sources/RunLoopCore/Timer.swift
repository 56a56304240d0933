/// A timer (T1–T10): fires once, or repeatedly on a fixed grid, in the modes it was added to.
///
/// Timers fire only after the loop waited (L-b). A repeating timer that falls behind skips
/// the missed ticks and stays on its original grid (T5). Tolerance is honoured as on Darwin:
/// the loop may defer a wake by up to `min(tolerance, interval / 2)` to fire several timers
/// together (T8).
///
/// ```swift
/// let tick = try LoopTimer(after: 0.5, clock: loop.clock, interval: 1, label: "tick") { timer in
///     print("tick at", timer.nextFireDate)
/// }
/// loop.add(tick, mode: .common)
/// ```
public final class LoopTimer: @unchecked Sendable {  // mutable state is guarded by core.lock
    public let label: String
    let callout: (LoopTimer) -> Void
    let core = ItemCore(allowsSeveralLoops: false)
    /// The date currently scheduled (or firing, inside the callout: T5).
    var fireDate: LoopInstant
    let intervalNs: UInt64
    private let intervalSeconds: Double
    private var toleranceSeconds: Double
    var firing = false
    /// `setNextFireDate` was called during the callout: keep that date (T5).
    var rescheduledInCallout = false

    /// A timer first firing at `fireAt` on its loop's clock.
    ///
    /// - Parameters:
    ///   - interval: seconds between fires; 0 = one-shot. Negative clamps to 0 (T1);
    ///     NaN throws ``LoopError/invalidInterval(_:)``.
    ///   - tolerance: seconds the loop may defer a fire; negative clamps to 0; NaN throws.
    public init(fireAt: LoopInstant, interval: Double = 0, tolerance: Double = 0, label: String = "timer",
                _ callout: @escaping (LoopTimer) -> Void) throws {
        guard !interval.isNaN else { throw LoopError.invalidInterval(interval) }
        guard !tolerance.isNaN else { throw LoopError.invalidTolerance(tolerance) }
        let clampedInterval = min(max(interval, 0), Nanoseconds.intervalLimitSeconds)
        self.intervalSeconds = clampedInterval
        self.intervalNs = Nanoseconds.from(seconds: clampedInterval)
        self.toleranceSeconds = max(tolerance, 0)
        self.fireDate = fireAt
        self.label = label
        self.callout = callout
    }

    /// A timer first firing `delay` seconds from `clock.now` (negative: as soon as possible).
    public convenience init(after delay: Double, clock: LoopClock, interval: Double = 0, tolerance: Double = 0,
                            label: String = "timer", _ callout: @escaping (LoopTimer) -> Void) throws {
        guard !delay.isNaN else { throw LoopError.invalidDelay(delay) }
        try self.init(fireAt: Nanoseconds.add(clock.now, Nanoseconds.from(seconds: delay)),
                      interval: interval, tolerance: tolerance, label: label, callout)
    }

    /// The next fire date; inside the callout, the date being fired (T5).
    public var nextFireDate: LoopInstant { core.lock.withLock { fireDate } }

    /// Moves the next fire (T6). A past date means "as soon as possible". Inside the timer's own
    /// callout the new date replaces the catch-up computation (T5).
    public func setNextFireDate(_ date: LoopInstant) {
        let loop: Loop? = core.lock.withLock {
            fireDate = date
            if firing { rescheduledInCallout = true }
            return core.valid ? core.homes.first?.loop : nil
        }
        loop?.reposition(self)
    }

    /// Seconds between fires (0 for a one-shot timer).
    public var interval: Double { intervalSeconds }

    /// Requested tolerance in seconds; the effective value is `min(tolerance, interval / 2)` for
    /// repeating timers (Darwin's rule, T8). Negative values clamp to 0; NaN is ignored with a
    /// diagnostic.
    public var tolerance: Double {
        get { core.lock.withLock { toleranceSeconds } }
        set {
            guard !newValue.isNaN else {
                Diagnostics.once("timer-tolerance-nan", "LoopTimer.tolerance = nan ignored (timer '\(label)')")
                return
            }
            let loop: Loop? = core.lock.withLock {
                toleranceSeconds = max(newValue, 0)
                return core.valid ? core.homes.first?.loop : nil
            }
            loop?.reposition(self)
        }
    }

    /// The tolerance the loop applies, in nanoseconds. Call with core.lock held.
    var effectiveToleranceNsLocked: UInt64 {
        var tol = toleranceSeconds
        if intervalSeconds > 0 { tol = min(tol, intervalSeconds / 2) }
        return Nanoseconds.from(seconds: tol)
    }

    public var isValid: Bool { core.isValid }

    /// Stops the timer and removes it from every mode (T7); allowed inside its own callout.
    public func invalidate() {
        guard let loops = core.invalidate() else { return }
        for loop in loops { loop.purge(self) }
    }
}
