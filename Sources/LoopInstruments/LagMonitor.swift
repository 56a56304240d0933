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
public final class LagMonitor: LoopCalloutInterceptor, Sendable {
    /// Everything that changes, behind one lock: the configuration, and the turn state that the
    /// observers write on the loop's thread and the watchdog reads on its own.
    private struct Shared {
        var clock: (any LoopClock)?
        var thresholdNanos: UInt64
        var period: Duration
        var reportHandler: (@Sendable (LagReport) -> Void)?
        var checkAtCalloutEnd = false

        var awake = false
        var turnStart = LoopInstant.zero
        var startedBy: Loop.Activity = .afterWaiting
        var reportedThisTurn = false
        var runDepth = 0
        var callouts: [(kind: LoopEvent.Callout, label: String)] = []
        var keptReports: [LagReport] = []
        var turns = 0
        var longestTurnNanos: UInt64 = 0

        var installed: [InstalledObserver] = []
        var watchdog: Watchdog?

        var now: LoopInstant { (clock ?? MonotonicClock.shared).now }

        mutating func startTurn(at now: LoopInstant, by activity: Loop.Activity) {
            awake = true
            turnStart = now
            startedBy = activity
            reportedThisTurn = false
        }

        mutating func endTurn(at now: LoopInstant) {
            guard awake else { return }
            awake = false
            turns += 1
            longestTurnNanos = max(longestTurnNanos, now.nanoseconds &- turnStart.nanoseconds)
        }
    }

    private let shared: Locked<Shared>
    private let recorder: TraceRecorder?

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
        self.shared = Locked(Shared(clock: clock, thresholdNanos: Nanoseconds.from(threshold), period: checkPeriod,
                                    reportHandler: onReport))
        self.recorder = recorder
    }

    deinit {
        let (dog, installed) = shared.withLock { ($0.watchdog, $0.installed) }
        dog?.stop()
        for item in installed {
            item.remove()
            item.loop?.removeCalloutInterceptor(self)
        }
    }

    // MARK: Configuration

    /// How long a turn may stay awake before it is reported.
    public var threshold: Duration { .nanoseconds(Int64(clamping: shared.withLock { $0.thresholdNanos })) }

    /// Changes the threshold; negative throws and changes nothing.
    public func setThreshold(_ threshold: Duration) throws(LoopError) {
        try Self.validate(threshold: threshold)
        shared.withLock { $0.thresholdNanos = Nanoseconds.from(threshold) }
    }

    /// Time between watchdog checks.
    public var checkPeriod: Duration { shared.withLock { $0.period } }

    /// Changes the watchdog's period; zero or negative throws and changes nothing.
    public func setCheckPeriod(_ checkPeriod: Duration) throws(LoopError) {
        try Self.validate(checkPeriod: checkPeriod)
        let dog = shared.withLock { state -> Watchdog? in
            state.period = checkPeriod
            return state.watchdog
        }
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
        get { shared.withLock { $0.reportHandler } }
        set { shared.withLock { $0.reportHandler = newValue } }
    }

    /// When true, every callout's end runs a check before the callout is forgotten: on a
    /// virtual clock this acts as a watchdog with perfect resolution.
    public var checksAtCalloutEnd: Bool {
        get { shared.withLock { $0.checkAtCalloutEnd } }
        set { shared.withLock { $0.checkAtCalloutEnd = newValue } }
    }

    // MARK: Installing

    /// Adds the begin (order `Int.min`, all activities) and end (order `Int.max`,
    /// BeforeWaiting|Exit) observers in `modes` (the common modes by default), and, when
    /// `interceptCallouts` is true, joins the loop's callout interceptors (`addCalloutInterceptor`).
    public func install(on loop: Loop, modes: [Loop.Mode] = [.common], interceptCallouts: Bool = true) {
        shared.withLock { if $0.clock == nil { $0.clock = loop.clock } }
        for mode in modes {
            let begin = LoopObserver(activities: .allActivities, order: Int.min, label: "LagMonitor.begin") { [weak self] _, activity in
                self?.beginObserved(activity)
            }
            let end = LoopObserver(activities: [.beforeWaiting, .exit], order: Int.max, label: "LagMonitor.end") { [weak self] _, activity in
                self?.endObserved(activity)
            }
            loop.add(begin, mode: mode)
            loop.add(end, mode: mode)
            shared.withLock {
                $0.installed.append(InstalledObserver(loop: loop, observer: begin, mode: mode))
                $0.installed.append(InstalledObserver(loop: loop, observer: end, mode: mode))
            }
        }
        if interceptCallouts { loop.addCalloutInterceptor(self) }
    }

    /// Removes the observers (and the interceptor if it is this monitor).
    public func uninstall() {
        let items = shared.withLock { state -> [InstalledObserver] in
            defer { state.installed.removeAll() }
            return state.installed
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
        shared.withLock { state in
            let now = state.now
            if activity.contains(.entry) { state.runDepth += 1 }
            if activity.contains(.afterWaiting) {
                state.startTurn(at: now, by: .afterWaiting)
            } else if !state.awake && (activity.contains(.beforeTimers) || activity.contains(.beforeSources)) {
                state.startTurn(at: now, by: activity.contains(.beforeTimers) ? .beforeTimers : .beforeSources)
            }
        }
    }

    /// The end observer's work (BeforeWaiting or Exit).
    public func endObserved(_ activity: Loop.Activity) {
        shared.withLock { state in
            let now = state.now
            if activity.contains(.beforeWaiting) {
                state.endTurn(at: now)
            } else if activity.contains(.exit) {
                state.endTurn(at: now)
                state.runDepth = max(0, state.runDepth - 1)
                // Leaving a nested run returns into a callout of the outer turn: measure it
                // again from here instead of losing it (Matrix would stop measuring).
                if state.runDepth > 0 { state.startTurn(at: now, by: .exit) }
            }
        }
    }

    // MARK: Callout tracking

    public func willCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        shared.withLock { $0.callouts.append((kind, label)) }
    }

    public func didCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        if shared.withLock({ $0.checkAtCalloutEnd }) { check() }
        shared.withLock { _ = $0.callouts.popLast() }
    }

    // MARK: Checking

    /// Reports the current turn if it has been awake longer than the threshold and was not
    /// reported yet; returns the report (nil otherwise). The watchdog calls this; tests call
    /// it directly with a virtual clock.
    @discardableResult
    public func check(now: LoopInstant? = nil) -> LagReport? {
        let (report, handler): (LagReport?, (@Sendable (LagReport) -> Void)?) = shared.withLock { state in
            let instant = now ?? state.now
            guard state.awake, !state.reportedThisTurn, instant > state.turnStart,
                  instant.nanoseconds - state.turnStart.nanoseconds > state.thresholdNanos else {
                return (nil, nil)
            }
            state.reportedThisTurn = true
            let report = LagReport(
                turnStart: state.turnStart, detectedAt: instant, startedBy: state.startedBy,
                calloutLabel: state.callouts.last?.label, calloutKind: state.callouts.last?.kind,
                calloutStack: state.callouts.map(\.label),
                threshold: .nanoseconds(Int64(clamping: state.thresholdNanos)))
            state.keptReports.append(report)
            return (report, state.reportHandler)
        }
        if let report {
            recorder?.record(report)
            handler?(report)
        }
        return report
    }

    /// Every report so far, oldest first.
    public var reports: [LagReport] { shared.withLock { $0.keptReports } }

    /// True between a wake-up and the next BeforeWaiting.
    public var isAwake: Bool { shared.withLock { $0.awake } }

    /// Turns completed (reached BeforeWaiting or Exit) since creation.
    public var completedTurns: Int { shared.withLock { $0.turns } }

    /// The longest turn measured so far.
    public var longestTurn: Duration { .nanoseconds(Int64(clamping: shared.withLock { $0.longestTurnNanos })) }

    // MARK: Watchdog thread

    /// Starts a thread that calls `check()` every `checkPeriod` seconds of real time.
    /// Call `stopWatchdog()` (or drop the monitor) to stop and join it.
    public func startWatchdog() {
        let dog = shared.withLock { state -> Watchdog? in
            guard state.watchdog == nil else { return nil }
            let dog = Watchdog(name: "LagMonitor", period: Self.seconds(state.period)) { [weak self] in self?.check() }
            state.watchdog = dog
            return dog
        }
        dog?.start()
    }

    /// Stops the watchdog thread and joins it; returns when the thread has exited.
    public func stopWatchdog() {
        let dog = shared.withLock { state -> Watchdog? in
            defer { state.watchdog = nil }
            return state.watchdog
        }
        dog?.stop()
    }

    /// True while the watchdog thread runs.
    public var isWatchdogRunning: Bool { shared.withLock { $0.watchdog != nil } }

    /// The watchdog's kernel thread id (for leak checks via /proc/self/task), 0 when stopped.
    public var watchdogThreadID: Int64 { shared.withLock { $0.watchdog }?.kernelThreadID ?? 0 }
}
