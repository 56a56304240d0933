import RunLoopCore

/// A turn that stayed awake longer than a `LagMonitor`'s threshold.
///
/// ```swift
/// monitor.onReport = { report in print("lag \(report.span) in \(report.calloutLabel ?? "?")") }
/// ```
public struct LagReport: Sendable, Equatable {
    /// When the turn woke up (AfterWaiting, or its first BeforeTimers/BeforeSources).
    public var turnStart: LoopInstant
    /// When the check found it over the threshold.
    public var detectedAt: LoopInstant
    /// The activity that started the turn.
    public var startedBy: Loop.Activity
    /// The innermost callout running at `detectedAt`, if any.
    public var calloutLabel: String?
    public var calloutKind: LoopEvent.Callout?
    /// Every callout running at `detectedAt`, outermost first (nested runs stack them).
    public var calloutStack: [String]
    /// The threshold the span exceeded.
    public var threshold: Duration

    public init(turnStart: LoopInstant, detectedAt: LoopInstant, startedBy: Loop.Activity, calloutLabel: String?,
                calloutKind: LoopEvent.Callout?, calloutStack: [String], threshold: Duration) {
        self.turnStart = turnStart
        self.detectedAt = detectedAt
        self.startedBy = startedBy
        self.calloutLabel = calloutLabel
        self.calloutKind = calloutKind
        self.calloutStack = calloutStack
        self.threshold = threshold
    }

    /// Awake span so far.
    public var span: Duration { turnStart.duration(to: detectedAt) }
}
