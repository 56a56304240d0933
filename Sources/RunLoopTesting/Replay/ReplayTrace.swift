import RunLoopKit

/// A recorded run of a loop: every callout with its pass, mode and clock time, the activities,
/// waits and runs around them, and the inputs that came from outside the loop's own code.
///
/// A trace is plain data. ``text`` writes it in the versioned line format described in
/// `Docs/Replay.md`; ``init(parsing:)`` reads that format back and names the line and field of
/// anything it cannot read.
///
/// ```swift
/// let trace = ReplayTrace(clockStart: .zero, entries: [
///     ReplayTraceEntry(.calloutBegin(.source0, label: "s0"), pass: 1, mode: "kCFRunLoopDefaultMode", time: .zero),
/// ])
/// let again = try ReplayTrace(parsing: trace.text)
/// print(again == trace)   // true
/// ```
public struct ReplayTrace: Sendable, Equatable {
    /// The version ``text`` writes. Version 2 added the `perform` input kind.
    public static let formatVersion = 2
    /// The versions ``init(parsing:)`` reads: version 1 files are read as they are (they cannot
    /// hold a `perform` line, and one that does is refused).
    public static let readableVersions = 1...formatVersion

    /// The clock reading the recorded loop started from; a replay starts its `VirtualClock` here.
    public var clockStart: LoopInstant
    /// The entries in the order they happened.
    public var entries: [ReplayTraceEntry]

    public init(clockStart: LoopInstant, entries: [ReplayTraceEntry]) {
        self.clockStart = clockStart
        self.entries = entries
    }

    /// The line of the file that holds entry `index`: the line it was read from for a parsed
    /// trace, otherwise the line ``text`` writes it on.
    public func line(ofEntry index: Int) -> Int {
        if let lines = sourceLines, index < lines.count { return lines[index] }
        return ReplayTraceText.headerLineCount + index + 1
    }

    /// Lines the entries were read from (nil for a trace that was recorded, not parsed).
    /// Not part of equality: the same entries read from differently commented files are equal.
    var sourceLines: [Int]?

    public static func == (lhs: ReplayTrace, rhs: ReplayTrace) -> Bool {
        lhs.clockStart == rhs.clockStart && lhs.entries == rhs.entries
    }
}

/// One line of a ``ReplayTrace``: what happened, in which pass and mode, at what clock time.
///
/// ```swift
/// let entry = ReplayTraceEntry(.activity("BW"), pass: 3, mode: "kCFRunLoopDefaultMode", time: .zero)
/// print(entry.line)   // activity p=3 m="kCFRunLoopDefaultMode" t=0 a=BW
/// ```
public struct ReplayTraceEntry: Sendable, Equatable {
    /// What an entry records.
    public enum Kind: Sendable, Equatable {
        /// `run(mode:…)` began.
        case runBegin
        /// `run(mode:…)` returned with this result (`finished`, `stopped`, `timedOut`, `handledSource`).
        case runEnd(result: String)
        /// An activity was notified (E, BT, BS, BW, AW, X).
        case activity(String)
        /// A callout started.
        case calloutBegin(LoopEvent.Callout, label: String)
        /// A callout returned.
        case calloutEnd(LoopEvent.Callout, label: String)
        /// The loop is about to wait (a wait that may block).
        case sleep
        /// The loop is back from that wait.
        case wake
        /// A transaction commit (frame number and why it committed).
        case commit(frame: UInt64, reason: String)
        /// An autorelease pool push, pop or pop-and-push.
        case pool(operation: String)
        /// A user log line.
        case log(String)
        /// A named point in time.
        case mark(String)
        /// A lag report for the named callout.
        case lag(label: String)
        /// Something that came from outside the loop's own code.
        case input(ReplayInput)
    }

    public var kind: Kind
    /// `Loop.passCount` when it happened (for inputs: of the last loop event before them).
    public var pass: UInt64
    /// The mode's name ("" before the first run).
    public var mode: String
    /// The loop clock's reading.
    public var time: LoopInstant

    public init(_ kind: Kind, pass: UInt64, mode: String, time: LoopInstant) {
        self.kind = kind
        self.pass = pass
        self.mode = mode
        self.time = time
    }

    /// The entry as one line of the trace format.
    public var line: String { ReplayTraceText.line(self) }
}
