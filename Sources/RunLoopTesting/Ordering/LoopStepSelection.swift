import RunLoopKit

/// Which entries of a trace become ``LoopStep``s: the kinds shown, the callouts hidden (the
/// standard observers and the harness's own by default), and an optional window.
///
/// ```swift
/// // The form of the published logs: activities and logged lines, from the first
/// // AfterWaiting up to the next sleep.
/// let seed = LoopStepSelection(kinds: [.activities, .logs], from: .activity(.afterWaiting), to: .sleep())
/// ```
public struct LoopStepSelection: Sendable {
    /// Kinds of steps.
    public struct Kinds: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let activities = Kinds(rawValue: 1 << 0)
        public static let callouts = Kinds(rawValue: 1 << 1)
        /// `layout(…)`, `display(…)` and `commit`.
        public static let commits = Kinds(rawValue: 1 << 2)
        public static let logs = Kinds(rawValue: 1 << 3)
        public static let marks = Kinds(rawValue: 1 << 4)
        public static let all: Kinds = [.activities, .callouts, .commits, .logs, .marks]
    }

    public var kinds: Kinds
    /// The activities shown when `kinds` has `.activities` (default: all of them).
    public var activities: Loop.Activity
    /// Callouts with these labels are left out (they still count as the callout a log line
    /// was written in).
    public var hiddenCalloutLabels: Set<String>
    /// The window starts at this boundary (inclusive); nil: at the first entry.
    public var start: TextLogFilter.Boundary?
    /// The window ends before this boundary (exclusive); nil: at the last entry.
    public var end: TextLogFilter.Boundary?

    public init(kinds: Kinds = .all, activities: Loop.Activity = .allActivities,
                hiding hiddenCalloutLabels: Set<String> = LoopStepSelection.infrastructureLabels,
                from start: TextLogFilter.Boundary? = nil, to end: TextLogFilter.Boundary? = nil) {
        self.kinds = kinds
        self.activities = activities
        self.hiddenCalloutLabels = hiddenCalloutLabels
        self.start = start
        self.end = end
    }

    /// The standard observers' labels and the harness's control observer: present in every
    /// turn, rarely what a test is about.
    public static let infrastructureLabels: Set<String> = ObserverLabel.standard.union([LoopTestHarness.controlObserverLabel])

    /// Every kind, the whole trace, infrastructure callouts hidden.
    public static let all = LoopStepSelection()

    /// The published logs' form: activities and logged lines, from the first AfterWaiting up to
    /// the loop's next sleep.
    public static let seed = LoopStepSelection(kinds: [.activities, .logs], from: .activity(.afterWaiting), to: .sleep())

    /// Keeps a step of this kind? (The window is applied separately.)
    func shows(_ step: LoopStep) -> Bool {
        switch step {
        case .activity(let activity): kinds.contains(.activities) && activities.contains(activity)
        case .callout(_, let label): kinds.contains(.callouts) && !hiddenCalloutLabels.contains(label)
        case .layout, .display, .commit: kinds.contains(.commits)
        case .log: kinds.contains(.logs)
        case .mark: kinds.contains(.marks)
        }
    }

    /// The sequence numbers of the entries inside the window.
    func window(_ entries: [TraceEntry]) -> Set<UInt64>? {
        guard start != nil || end != nil else { return nil }
        let filter = TextLogFilter(includesMarks: true, includesCallouts: true, includesCommits: true,
                                   includesLoopInternals: true, start: start, end: end)
        return Set(filter.apply(to: entries).map(\.sequence))
    }
}
