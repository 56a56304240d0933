// The trace both executors record: activities (seen by a per-mode tracer observer that runs
// before every script observer), callouts, and run begin/end with the run result.

enum RunOutcome: Int32, Sendable, CustomStringConvertible {
    case finished = 1, stopped = 2, timedOut = 3, handledSource = 4

    var description: String {
        switch self {
        case .finished: return "finished"
        case .stopped: return "stopped"
        case .timedOut: return "timedOut"
        case .handledSource: return "handledSource"
        }
    }
}

enum TraceEvent: Hashable, Sendable, CustomStringConvertible {
    /// The mode's tracer observer saw this activity.
    case activity(ScriptMode, ScriptActivity)
    /// A script observer ran; `acted` = it performed actions in this callout.
    case observer(Int, ScriptActivity, acted: Bool)
    case source(Int, acted: Bool)
    case timer(Int, acted: Bool)
    case block(Int, acted: Bool)
    case runBegin(ScriptMode, RunTimeout, rash: Bool)
    case runEnd(RunOutcome)
    /// The S4 condition was reached here (a signalled source0 lost its signal or validity while
    /// another source0 perform was on the stack); the comparison stops at this point.
    case s4Marker

    var description: String {
        func star(_ acted: Bool) -> String { acted ? "*" : "" }
        switch self {
        case .activity(let m, let a): return "\(m):\(a.short)"
        case .observer(let o, let a, let acted): return "o\(o).\(a.short)\(star(acted))"
        case .source(let s, let acted): return "s\(s)\(star(acted))"
        case .timer(let t, let acted): return "t\(t)\(star(acted))"
        case .block(let b, let acted): return "b\(b)\(star(acted))"
        case .runBegin(let m, let t, let rash): return "[run \(m) t=\(t)\(rash ? " rash" : "")"
        case .runEnd(let r): return "\(r)]"
        case .s4Marker: return "<S4>"
        }
    }
}

/// What one executor produced for one script.
struct Execution: Sendable {
    var trace: [TraceEvent] = []
    /// Script time (seconds since the script started, on the executor's clock) of each event.
    var times: [Double] = []
    /// CF only: runs after which a leftover wake-up was drained (L-g).
    var wakeDrains = 0
    /// CF only: set when a callout drifted further from the time grid than the budget allows,
    /// which makes the run useless as a reference (it is retried, never compared).
    var timingViolation: String?

    static func format(_ trace: [TraceEvent]) -> String {
        var out: [String] = []
        var line: [String] = []
        for event in trace {
            if case .runBegin = event, !line.isEmpty { out.append(line.joined(separator: " ")); line = [] }
            line.append(event.description)
        }
        if !line.isEmpty { out.append(line.joined(separator: " ")) }
        return out.joined(separator: "\n")
    }
}

/// What a set of traces exercised (printed by the suite and checked against minimums).
struct TraceCoverage: CustomStringConvertible {
    var runs = 0, nestedRuns = 0, waits = 0
    var results: [RunOutcome: Int] = [:]
    var observerCallouts = 0, sourceCallouts = 0, timerCallouts = 0, blockCallouts = 0

    init(_ traces: [[TraceEvent]]) {
        for trace in traces {
            var depth = 0
            for event in trace {
                switch event {
                case .runBegin:
                    runs += 1
                    if depth > 0 { nestedRuns += 1 }
                    depth += 1
                case .runEnd(let r):
                    depth -= 1
                    results[r, default: 0] += 1
                case .activity(_, .afterWaiting): waits += 1
                case .observer: observerCallouts += 1
                case .source: sourceCallouts += 1
                case .timer: timerCallouts += 1
                case .block: blockCallouts += 1
                default: break
                }
            }
        }
    }

    var description: String {
        let byResult = results.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) \($0.value)" }
        return "runs \(runs) (nested \(nestedRuns); \(byResult.joined(separator: ", "))), waits \(waits), "
            + "callouts: observer \(observerCallouts), source0 \(sourceCallouts), timer \(timerCallouts), block \(blockCallouts)"
    }
}
