import RunLoopCore

/// Chooses which trace entries a text log shows, and the window it starts and ends at.
///
/// ```swift
/// // The form of the seed logs: from the first AfterWaiting up to the next sleep,
/// // activities by CF name interleaved with log lines.
/// let lines = recorder.lines(.seed)
/// // Everything, including callouts and pool traffic:
/// let all = recorder.lines(.everything)
/// ```
public struct TextLogFilter: Sendable, Equatable {
    /// A point in the trace, the `occurrence`-th time (1-based) something happens.
    public enum Boundary: Sendable, Equatable {
        /// An activity notification (e.g. the first `.afterWaiting`).
        case activity(Loop.Activity, occurrence: Int = 1)
        /// The loop going to sleep.
        case sleep(occurrence: Int = 1)
        /// The loop returning from its sleep.
        case wake(occurrence: Int = 1)
        /// A log line with exactly this text.
        case log(String, occurrence: Int = 1)
    }

    /// Activities shown.
    public var activities: Loop.Activity = .allActivities
    public var includesLogs = true
    public var includesMarks = false
    public var includesCallouts = false
    public var includesPool = false
    public var includesCommits = false
    public var includesMemory = false
    public var includesLags = false
    /// Sleep, wake, run begin and run end lines.
    public var includesLoopInternals = false
    /// Only entries recorded on this recorder thread number (nil: all threads).
    public var thread: Int?
    /// The window starts AT this boundary (inclusive); nil: at the first entry.
    public var start: Boundary?
    /// The window ends BEFORE this boundary (exclusive), counted from the start; nil: at the end.
    public var end: Boundary?

    public init(activities: Loop.Activity = .allActivities, includesLogs: Bool = true, includesMarks: Bool = false,
                includesCallouts: Bool = false, includesPool: Bool = false, includesCommits: Bool = false,
                includesMemory: Bool = false, includesLags: Bool = false, includesLoopInternals: Bool = false,
                thread: Int? = nil, start: Boundary? = nil, end: Boundary? = nil) {
        self.activities = activities
        self.includesLogs = includesLogs
        self.includesMarks = includesMarks
        self.includesCallouts = includesCallouts
        self.includesPool = includesPool
        self.includesCommits = includesCommits
        self.includesMemory = includesMemory
        self.includesLags = includesLags
        self.includesLoopInternals = includesLoopInternals
        self.thread = thread
        self.start = start
        self.end = end
    }

    /// Activities and log lines, the whole trace.
    public static let cfNames = TextLogFilter()

    /// The seed logs' form: activities and log lines from the first AfterWaiting up to
    /// (not including) the loop's next sleep.
    public static let seed = TextLogFilter(start: .activity(.afterWaiting), end: .sleep())

    /// Every kind of entry, the whole trace.
    public static let everything = TextLogFilter(
        includesMarks: true, includesCallouts: true, includesPool: true, includesCommits: true,
        includesMemory: true, includesLags: true, includesLoopInternals: true)

    /// Returns a copy with another window.
    public func window(from start: Boundary?, to end: Boundary?) -> TextLogFilter {
        var copy = self
        copy.start = start
        copy.end = end
        return copy
    }

    /// True when `entry` is a kind this filter shows (ignores the window).
    public func shows(_ entry: TraceEntry) -> Bool {
        if let thread, entry.thread != thread { return false }
        switch entry.kind {
        case .activity(let activity): return activities.contains(activity)
        case .log: return includesLogs
        case .mark: return includesMarks
        case .calloutBegin, .calloutEnd: return includesCallouts
        case .pool: return includesPool
        case .commit: return includesCommits
        case .memory: return includesMemory
        case .lag: return includesLags
        case .sleep, .wake, .runBegin, .runEnd: return includesLoopInternals
        }
    }

    /// The entries inside the window that this filter shows, in order.
    public func apply(to entries: [TraceEntry]) -> [TraceEntry] {
        var startIndex = entries.startIndex
        if let start {
            guard let found = Self.index(of: start, in: entries, from: entries.startIndex, thread: thread) else { return [] }
            startIndex = found
        }
        var endIndex = entries.endIndex
        if let end {
            // Search after the start entry so a window like "AfterWaiting … next AfterWaiting" works.
            let searchFrom = start == nil ? startIndex : min(startIndex + 1, entries.endIndex)
            endIndex = Self.index(of: end, in: entries, from: searchFrom, thread: thread) ?? entries.endIndex
        }
        return entries[startIndex..<endIndex].filter(shows)
    }

    private static func index(of boundary: Boundary, in entries: [TraceEntry], from: Int, thread: Int?) -> Int? {
        var seen = 0
        let wanted: Int
        switch boundary {
        case .activity(_, let n), .sleep(let n), .wake(let n), .log(_, let n): wanted = max(1, n)
        }
        for index in from..<entries.endIndex {
            let entry = entries[index]
            if let thread, entry.thread != thread { continue }
            let matches: Bool
            switch (boundary, entry.kind) {
            case (.activity(let activity, _), .activity(let seenActivity)): matches = activity == seenActivity
            case (.sleep, .sleep), (.wake, .wake): matches = true
            case (.log(let text, _), .log): matches = entry.label == text
            default: matches = false
            }
            if matches {
                seen += 1
                if seen == wanted { return index }
            }
        }
        return nil
    }
}
