import RunLoopCore

/// One turn of a loop as seen in a trace: from the first entry after a sleep (or the start
/// of a top-level run) up to and including the next sleep (or the end of that run).
public struct TraceTurn: Sendable, Equatable {
    /// 1-based position among the turns of the trace.
    public let number: Int
    public let entries: [TraceEntry]

    public var start: LoopInstant { entries.first?.time ?? .zero }
    public var end: LoopInstant { entries.last?.time ?? .zero }
    /// Time from the first to the last entry.
    public var duration: Duration { start.duration(to: end) }
    /// The same in nanoseconds, for the charts' arithmetic.
    var durationNanoseconds: UInt64 { end.nanoseconds &- start.nanoseconds }
    /// The first and last loop pass numbers seen.
    public var passes: ClosedRange<UInt64> {
        let values = entries.map(\.pass)
        return (values.min() ?? 0)...(values.max() ?? 0)
    }

    /// Splits `entries` of one thread into turns (the first thread that emitted an
    /// activity when `thread` is nil).
    ///
    /// ```swift
    /// let turns = TraceTurn.split(recorder.entries)
    /// print(turns.count, turns.map(\.duration).max() ?? .zero)
    /// ```
    public static func split(_ entries: [TraceEntry], thread: Int? = nil) -> [TraceTurn] {
        let lane = thread ?? entries.first { if case .activity = $0.kind { true } else { false } }?.thread ?? entries.first?.thread
        var turns: [TraceTurn] = []
        var current: [TraceEntry] = []
        var runDepth = 0
        func close() {
            if !current.isEmpty { turns.append(TraceTurn(number: turns.count + 1, entries: current)) }
            current = []
        }
        for entry in entries where entry.thread == lane {
            current.append(entry)
            switch entry.kind {
            case .runBegin: runDepth += 1
            case .runEnd:
                runDepth = max(0, runDepth - 1)
                if runDepth == 0 { close() }
            case .sleep: close()
            default: break
            }
        }
        close()
        return turns
    }
}
