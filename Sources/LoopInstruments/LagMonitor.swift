import PThreads
import RunLoopCore

/// Detects long run-loop turns the way WeChat Matrix does on iOS.
///
/// A begin observer (order `Int.min`) stamps the wake-up — AfterWaiting, or the first
/// BeforeTimers/BeforeSources of a turn — and an end observer (order `Int.max`, after the
/// commit at 2000000 and the pool pop) closes the turn at BeforeWaiting, so the measured
/// span includes the commit. `check(now:)` reports a turn whose span exceeds `threshold`,
/// once per turn, with the callout running at that moment (tracked as the loop's
/// `calloutInterceptor`). A watchdog thread can call `check` every `checkPeriod`; tests and
/// virtual-clock scenarios call it themselves and never sleep.
///
/// ```swift
/// let clock = VirtualClock()
/// let loop = Loop(clock: clock)
/// let monitor = try LagMonitor(threshold: .milliseconds(100)) { report in
///     print(report.calloutLabel ?? "?", report.span)
/// }
/// monitor.install(on: loop)
/// loop.perform(label: "slowWork") {
///     clock.advance(seconds: 0.2)         // simulated 200 ms of work
///     monitor.check()                     // → one report naming "slowWork"
/// }
/// loop.run(mode: .default, timeout: 0)
/// ```
public final class LagMonitor: LoopCalloutInterceptor, @unchecked Sendable {
    // Sendable: all mutable state is guarded by `lock`.
    private let lock = PThreadMutex()
    private var clock: (any LoopClock)?
    private var thresholdNanos: UInt64
    private var period: Duration
    private var reportHandler: (@Sendable (LagReport) -> Void)?
    private let recorder: TraceRecorder?

    // Turn state, written by the observers on the loop's thread, read by the watchdog.
    private var awake = false
    private var turnStart = LoopInstant.zero
    private var startedBy: Loop.Activity = .afterWaiting
    private var reportedThisTurn = false
    private var runDepth = 0
    private var callouts: [(kind: LoopEvent.Callout, label: String)] = []
    private var keptReports: [LagReport] = []
    private var turns = 0
    private var longestTurnNanos: UInt64 = 0

    private var installed: [InstalledObserver] = []
    private var watchdog: Watchdog?
    private var checkAtCalloutEnd = false

    /// - Parameters:
    ///   - clock: the clock spans are measured on; `install(on:)` adopts the loop's when nil.
    ///   - threshold: how long a turn may stay awake before it is reported (Matrix: 2 s).
    ///   - checkPeriod: time between watchdog checks (Matrix: 1 s).
    ///   - recorder: when given, reports are also recorded into the trace.
    ///   - onReport: called once per reported turn, on the thread that ran `check`.
    /// - Throws: `LoopError.negativeDuration` for a negative threshold or a check
    ///   period that is not positive.
    public init(clock: (any LoopClock)? = nil, threshold: Duration = .seconds(2), checkPeriod: Duration = .seconds(1),
                recorder: TraceRecorder? = nil, onReport: (@Sendable (LagReport) -> Void)? = nil) throws(LoopError) {
        try Self.validate(threshold: threshold)
        try Self.validate(checkPeriod: checkPeriod)
        self.clock = clock
        self.thresholdNanos = Nanoseconds.from(threshold)
        self.period = checkPeriod
        self.recorder = recorder
        self.reportHandler = onReport
    }

    deinit {
        watchdog?.stop()
        for item in installed {
            item.remove()
            item.loop?.removeCalloutInterceptor(self)
        }
    }

    // MARK: Configuration

    /// How long a turn may stay awake before it is reported.
    public var threshold: Duration { .nanoseconds(Int64(clamping: lock.withLock { thresholdNanos })) }

    /// Changes the threshold; negative throws and changes nothing.
    public func setThreshold(_ threshold: Duration) throws(LoopError) {
        try Self.validate(threshold: threshold)
        lock.withLock { thresholdNanos = Nanoseconds.from(threshold) }
    }

    /// Time between watchdog checks.
    public var checkPeriod: Duration { lock.withLock { period } }

    /// Changes the watchdog's period; zero or negative throws and changes nothing.
    public func setCheckPeriod(_ checkPeriod: Duration) throws(LoopError) {
        try Self.validate(checkPeriod: checkPeriod)
        let dog = lock.withLock { period = checkPeriod; return watchdog }
        dog?.setPeriod(Self.seconds(checkPeriod))
    }

    private static func validate(threshold: Duration) throws(LoopError) {
        guard threshold >= .zero else { throw LoopError.negativeDuration(threshold, what: "LagMonitor threshold") }
    }

    private static func validate(checkPeriod: Duration) throws(LoopError) {
        guard checkPeriod > .zero else { throw LoopError.negativeDuration(checkPeriod, what: "LagMonitor checkPeriod (must be > 0)") }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }


    /// Called once per reported turn, on the thread that ran the check.
    public var onReport: (@Sendable (LagReport) -> Void)? {
        get { lock.withLock { reportHandler } }
        set { lock.withLock { reportHandler = newValue } }
    }

    /// When true, every callout's end runs a check before the callout is forgotten: on a
    /// virtual clock this acts as a watchdog with perfect resolution.
    public var checksAtCalloutEnd: Bool {
        get { lock.withLock { checkAtCalloutEnd } }
        set { lock.withLock { checkAtCalloutEnd = newValue } }
    }

    // MARK: Installing

    /// Adds the begin (order `Int.min`, all activities) and end (order `Int.max`,
    /// BeforeWaiting|Exit) observers in `modes` (the common modes by default), and, when
    /// `interceptCallouts` is true, joins the loop's callout interceptors (`addCalloutInterceptor`).
    public func install(on loop: Loop, modes: [Loop.Mode] = [.common], interceptCallouts: Bool = true) {
        lock.withLock { if clock == nil { clock = loop.clock } }
        for mode in modes {
            let begin = LoopObserver(activities: .allActivities, order: Int.min, label: "LagMonitor.begin") { [weak self] _, activity in
                self?.beginObserved(activity)
            }
            let end = LoopObserver(activities: [.beforeWaiting, .exit], order: Int.max, label: "LagMonitor.end") { [weak self] _, activity in
                self?.endObserved(activity)
            }
            loop.add(begin, mode: mode)
            loop.add(end, mode: mode)
            lock.withLock {
                installed.append(InstalledObserver(loop: loop, observer: begin, mode: mode))
                installed.append(InstalledObserver(loop: loop, observer: end, mode: mode))
            }
        }
        if interceptCallouts { loop.addCalloutInterceptor(self) }
    }

    /// Removes the observers (and the interceptor if it is this monitor).
    public func uninstall() {
        let items = lock.withLock { () -> [InstalledObserver] in
            defer { installed.removeAll() }
            return installed
        }
        for item in items {
            item.remove()
            item.loop?.removeCalloutInterceptor(self)
        }
    }

    // MARK: Turn tracking (observer side)

    /// The begin observer's work; public so another loop integration (e.g. a real CFRunLoop
    /// observer) can drive the monitor.
    public func beginObserved(_ activity: Loop.Activity) {
        lock.withLock {
            let now = (clock ?? MonotonicClock.shared).now
            if activity.contains(.entry) { runDepth += 1 }
            if activity.contains(.afterWaiting) {
                startTurn(at: now, by: .afterWaiting)
            } else if !awake && (activity.contains(.beforeTimers) || activity.contains(.beforeSources)) {
                startTurn(at: now, by: activity.contains(.beforeTimers) ? .beforeTimers : .beforeSources)
            }
        }
    }

    /// The end observer's work (BeforeWaiting or Exit).
    public func endObserved(_ activity: Loop.Activity) {
        lock.withLock {
            let now = (clock ?? MonotonicClock.shared).now
            if activity.contains(.beforeWaiting) {
                endTurn(at: now)
            } else if activity.contains(.exit) {
                endTurn(at: now)
                runDepth = max(0, runDepth - 1)
                // Leaving a nested run returns into a callout of the outer turn: measure it
                // again from here instead of losing it (Matrix would stop measuring).
                if runDepth > 0 { startTurn(at: now, by: .exit) }
            }
        }
    }

    // Call with `lock` held.
    private func startTurn(at now: LoopInstant, by activity: Loop.Activity) {
        awake = true
        turnStart = now
        startedBy = activity
        reportedThisTurn = false
    }

    // Call with `lock` held.
    private func endTurn(at now: LoopInstant) {
        guard awake else { return }
        awake = false
        turns += 1
        longestTurnNanos = max(longestTurnNanos, now.nanoseconds &- turnStart.nanoseconds)
    }

    // MARK: Callout tracking

    public func willCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        lock.withLock { callouts.append((kind, label)) }
    }

    public func didCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        if lock.withLock({ checkAtCalloutEnd }) { check() }
        lock.withLock { _ = callouts.popLast() }
    }

    // MARK: Checking

    /// Reports the current turn if it has been awake longer than the threshold and was not
    /// reported yet; returns the report (nil otherwise). The watchdog calls this; tests call
    /// it directly with a virtual clock.
    @discardableResult
    public func check(now: LoopInstant? = nil) -> LagReport? {
        let (report, handler): (LagReport?, (@Sendable (LagReport) -> Void)?) = lock.withLock {
            let instant = now ?? (clock ?? MonotonicClock.shared).now
            guard awake, !reportedThisTurn, instant > turnStart,
                  instant.nanoseconds - turnStart.nanoseconds > thresholdNanos else {
                return (nil, nil)
            }
            reportedThisTurn = true
            let report = LagReport(
                turnStart: turnStart, detectedAt: instant, startedBy: startedBy,
                calloutLabel: callouts.last?.label, calloutKind: callouts.last?.kind,
                calloutStack: callouts.map(\.label), threshold: .nanoseconds(Int64(clamping: thresholdNanos)))
            keptReports.append(report)
            return (report, reportHandler)
        }
        if let report {
            recorder?.record(report)
            handler?(report)
        }
        return report
    }

    /// Every report so far, oldest first.
    public var reports: [LagReport] { lock.withLock { keptReports } }

    /// True between a wake-up and the next BeforeWaiting.
    public var isAwake: Bool { lock.withLock { awake } }

    /// Turns completed (reached BeforeWaiting or Exit) since creation.
    public var completedTurns: Int { lock.withLock { turns } }

    /// The longest completed turn, in nanoseconds.
    /// The longest turn measured so far.
    public var longestTurn: Duration { .nanoseconds(Int64(clamping: lock.withLock { longestTurnNanos })) }

    // MARK: Watchdog thread

    /// Starts a thread that calls `check()` every `checkPeriod` seconds of real time.
    /// Call `stopWatchdog()` (or drop the monitor) to stop and join it.
    public func startWatchdog() {
        let dog = lock.withLock { () -> Watchdog? in
            guard watchdog == nil else { return nil }
            let dog = Watchdog(name: "LagMonitor", period: Self.seconds(period)) { [weak self] in self?.check() }
            watchdog = dog
            return dog
        }
        dog?.start()
    }

    /// Stops the watchdog thread and joins it; returns when the thread has exited.
    public func stopWatchdog() {
        let dog = lock.withLock { () -> Watchdog? in
            defer { watchdog = nil }
            return watchdog
        }
        dog?.stop()
    }

    /// True while the watchdog thread runs.
    public var isWatchdogRunning: Bool { lock.withLock { watchdog != nil } }

    /// The watchdog's kernel thread id (for leak checks via /proc/self/task), 0 when stopped.
    public var watchdogThreadID: Int64 { lock.withLock { watchdog }?.kernelThreadID ?? 0 }
}
