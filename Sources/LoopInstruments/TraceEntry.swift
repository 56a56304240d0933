import RunLoopCore

/// One recorded event: something the loop reported through its event sink, or something the
/// loop cannot see (pool traffic, commits, marks, user log lines, memory samples, lag reports).
///
/// ```swift
/// for entry in recorder.entries where entry.kind == .log("reloadData") { print(entry.time) }
/// ```
public struct TraceEntry: Sendable, Equatable {
    /// What happened.
    public enum Kind: Sendable, Equatable {
        /// An activity the loop notified (emitted before its observers run).
        case activity(Loop.Activity)
        /// A callout started; `TraceEntry.label` is the item's label.
        case calloutBegin(LoopEvent.Callout)
        /// A callout returned.
        case calloutEnd(LoopEvent.Callout)
        /// The loop is about to wait (after BeforeWaiting).
        case sleep
        /// The loop is back from its wait (before AfterWaiting).
        case wake
        /// `run(mode:…)` began (Entry follows).
        case runBegin
        /// `run(mode:…)` returned with this result.
        case runEnd(Loop.RunResult)
        // The large payloads are `indirect` so the frequent entries (activities, callouts)
        // stay small in the recorder's buffer.
        /// An autorelease pool push, pop or pop-and-push.
        indirect case pool(PoolRecord)
        /// A transaction commit with its phases and layers.
        indirect case commit(CommitRecord)
        /// A named point in time (a layer mark, a milestone).
        case mark
        /// A free-form user log line; the text is `TraceEntry.label`.
        case log
        /// A memory sample taken by a `MemoryProbe`.
        indirect case memory(MemorySample)
        /// A lag report from a `LagMonitor`.
        indirect case lag(LagReport)
    }

    /// Position in the recorder, counting from 0 for the first entry ever recorded
    /// (entries dropped by a bounded recorder keep their numbers).
    public let sequence: UInt64
    public let kind: Kind
    /// The callout's label, the log text, the mark's name, or "" for activities.
    public let label: String
    /// The loop mode at that moment (the last mode the recorder saw on this thread's loop).
    public let mode: Loop.Mode?
    /// The loop pass (`Loop.passCount`) at that moment.
    public let pass: UInt64
    /// Nanoseconds on the loop's clock.
    public let time: LoopInstant
    /// Small per-recorder thread number (1 for the first thread seen, then 2, …).
    public let thread: Int

    public init(sequence: UInt64, kind: Kind, label: String, mode: Loop.Mode?, pass: UInt64,
                time: LoopInstant, thread: Int) {
        self.sequence = sequence
        self.kind = kind
        self.label = label
        self.mode = mode
        self.pass = pass
        self.time = time
        self.thread = thread
    }
}

/// An autorelease pool operation, as the umbrella's pool observers report it.
///
/// ```swift
/// recorder.record(PoolRecord(operation: .popAndPush, entriesBefore: 120, entriesAfter: 0))
/// ```
public struct PoolRecord: Sendable, Equatable {
    public enum Operation: String, Sendable, Equatable { case push, pop, popAndPush }
    public var operation: Operation
    /// Pending entries on this thread's pool before the operation.
    public var entriesBefore: Int
    /// Pending entries after it.
    public var entriesAfter: Int
    /// Pages in use after it (0 when unknown).
    public var pages: Int

    public init(operation: Operation, entriesBefore: Int, entriesAfter: Int, pages: Int = 0) {
        self.operation = operation
        self.entriesBefore = entriesBefore
        self.entriesAfter = entriesAfter
        self.pages = pages
    }

    /// Entries released by the operation (0 for a push).
    public var released: Int { max(0, entriesBefore - entriesAfter) }
}

/// A transaction commit, as a plain value so it can be fed from any `CommitSink`.
///
/// ```swift
/// recorder.record(CommitRecord(frame: 1, reason: "BeforeWaiting",
///     phases: [.init(name: "layout", layers: ["table"]), .init(name: "display", layers: ["cell"])]))
/// ```
public struct CommitRecord: Sendable, Equatable {
    /// One phase of the commit (hooks, layout, display, prepare, deliver, completion …).
    public struct Phase: Sendable, Equatable {
        public var name: String
        /// Names of the layers the phase touched, in order.
        public var layers: [String]
        /// Start and end on the loop's clock, when the sink knows them.
        public var start: LoopInstant?
        public var end: LoopInstant?

        public init(name: String, layers: [String] = [], start: LoopInstant? = nil, end: LoopInstant? = nil) {
            self.name = name
            self.layers = layers
            self.start = start
            self.end = end
        }
    }

    public var frame: UInt64
    /// Why it committed ("BeforeWaiting", "Exit", "flush", "flushIfTooLate" …).
    public var reason: String
    public var phases: [Phase]

    public init(frame: UInt64, reason: String = "", phases: [Phase] = []) {
        self.frame = frame
        self.reason = reason
        self.phases = phases
    }

    /// Every layer named by any phase, in phase order.
    public var layers: [String] { phases.flatMap(\.layers) }
}
