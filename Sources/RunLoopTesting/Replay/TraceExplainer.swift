import RunLoopKit

/// Explains each callout of a trace: the rule ids of `Docs/Rules.md` that put it where it is
/// and what it waited for (a timer's fire date, a signal, a port message, fd readiness, an
/// observer's activity, a block point of the pass).
///
/// `runloopkit explain FILE` prints ``text(_:)`` for a trace file.
///
/// ```swift
/// let trace = try ReplayTrace(parsing: """
///     runloopkit-trace 1
///     clock start=0
///     signal p=0 m="" t=0 from=loop label="s0"
///     run-begin p=0 m="kCFRunLoopDefaultMode" t=0
///     callout p=1 m="kCFRunLoopDefaultMode" t=0 c=source0 label="s0"
///     return p=1 m="kCFRunLoopDefaultMode" t=0 c=source0 label="s0"
///     run-end p=1 m="kCFRunLoopDefaultMode" t=0 result=handledSource
///     end entries=5
///     """)
/// print(TraceExplainer.explain(trace)[0].waitedFor)   // its signal at line 3 (pass 0, from the loop's thread)
/// ```
public enum TraceExplainer {
    /// The titles of the rules an explanation cites, as `Docs/Rules.md` names them.
    public static let ruleTitles: [String: String] = [
        "O1": "order", "O4": "notification from a snapshot",
        "B3": "when blocks run in a pass", "B5": "executor jobs",
        "S2": "performing sources0", "S3": "re-signalling inside the perform", "S8": "servicing a source1",
        "T4": "all overdue timers in one pass", "L-b": "timers fire only after a wait",
        "L-c": "one cause handled per pass", "X4": "servicing the main queue",
    ]

    /// One explanation per callout, in trace order.
    public static func explain(_ trace: ReplayTrace) -> [CalloutExplanation] {
        var explainer = Walk(trace: trace)
        return explainer.run()
    }

    /// The explanations as text, one block per callout, ready to print.
    public static func text(_ trace: ReplayTrace) -> String {
        let explanations = explain(trace)
        if explanations.isEmpty { return "no callouts in this trace (\(trace.entries.count) entries)\n" }
        return explanations.map(\.text).joined(separator: "\n") + "\n"
    }

    /// One pass over the entries, remembering the inputs not yet consumed and the last activity,
    /// wait and block point of each pass.
    private struct Walk {
        let trace: ReplayTrace
        /// Inputs per label waiting for the callout that consumes them (FIFO for sends and
        /// readiness; the latest for signals, which coalesce, S1).
        var signals: [String: Int] = [:]
        var sends: [String: [Int]] = [:]
        var readiness: [String: [Int]] = [:]
        /// Blocks other threads enqueued (`perform` inputs), oldest first: blocks run in order.
        var performs: [Int] = []
        var lastActivity: Int?
        var lastSleep: Int?
        var lastWake: Int?
        /// What last happened at the top level of the pass that a block point follows.
        var lastBlockPoint: String = "the start of the run"
        var depth = 0
        /// The latest callout begun, which may have made an input the trace does not show.
        var lastCallout: Int?

        init(trace: ReplayTrace) { self.trace = trace }

        mutating func run() -> [CalloutExplanation] {
            var explanations: [CalloutExplanation] = []
            for (index, entry) in trace.entries.enumerated() {
                switch entry.kind {
                case .input(let input): note(input, at: index)
                case .activity(let name):
                    lastActivity = index
                    if depth == 0 { lastBlockPoint = name == "BS" ? "BeforeSources" : "the end of the pass" }
                case .sleep: lastSleep = index
                case .wake: lastWake = index
                case .calloutBegin(let callout, let label):
                    explanations.append(explain(callout, label: label, entry: entry, at: index))
                    lastCallout = index
                    depth += 1
                case .calloutEnd(let callout, _):
                    depth = max(0, depth - 1)
                    if depth == 0 && callout == .source0 { lastBlockPoint = "the sources0 of the pass" }
                    if depth == 0 && (callout == .timer || callout == .source1 || callout == .fileSource || callout == .mainQueue) {
                        lastBlockPoint = "the end of the pass"
                    }
                default: break
                }
            }
            return explanations
        }

        mutating func note(_ input: ReplayInput, at index: Int) {
            switch input.action {
            case .signal(let label): if signals[label] == nil { signals[label] = index }   // S1: the first signal counts
            case .send(let label, _): sends[label, default: []].append(index)
            case .fileReady(let label, _): readiness[label, default: []].append(index)
            case .perform: if input.origin == .external { performs.append(index) }
            case .wakeUp, .advance: break
            }
        }

        /// Names the latest callout before this one, the likely maker of an unrecorded input.
        var latestCalloutNote: String {
            guard let index = lastCallout, case .calloutBegin(let callout, let label) = trace.entries[index].kind else { return "" }
            return "; the latest callout before it was \(ReplayTraceText.calloutName(callout)) \"\(label)\" at line \(trace.line(ofEntry: index))"
        }

        func describe(_ index: Int) -> String {
            let entry = trace.entries[index]
            var origin = ""
            if case .input(let input) = entry.kind {
                origin = input.origin == .loop ? ", from the loop's thread" : ", from another thread"
            }
            return "line \(trace.line(ofEntry: index)) (pass \(entry.pass)\(origin))"
        }

        mutating func explain(_ callout: LoopEvent.Callout, label: String, entry: ReplayTraceEntry, at index: Int) -> CalloutExplanation {
            let rules: [String]
            let waitedFor: String
            switch callout {
            case .observer:
                rules = ["O4", "O1"]
                if let activity = lastActivity, case .activity(let name) = trace.entries[activity].kind {
                    waitedFor = "activity \(name) at \(describe(activity)); observers of one activity run in order"
                } else {
                    waitedFor = "an activity of pass \(entry.pass) (not in the trace: record with observeActivities)"
                }
            case .source0:
                rules = ["S2"]
                if let signal = signals.removeValue(forKey: label) {
                    waitedFor = "its signal at \(describe(signal))"
                } else {
                    waitedFor = "a signal made before pass \(entry.pass) by code the trace does not show as an input"
                        + " (another callout, or a re-signal inside its own perform, S3)" + latestCalloutNote
                }
            case .source1:
                rules = ["S8", "L-c"]
                if var queue = sends[label], !queue.isEmpty {
                    let send = queue.removeFirst()
                    sends[label] = queue
                    waitedFor = "the message sent at \(describe(send)); one port message is handled per pass"
                } else {
                    waitedFor = "a message on its port (the send is not in the trace as an input)" + latestCalloutNote
                }
            case .fileSource:
                rules = ["S8", "L-c"]
                if var queue = readiness[label], !queue.isEmpty {
                    let ready = queue.removeFirst()
                    readiness[label] = queue
                    waitedFor = "its descriptor's readiness at \(describe(ready))"
                } else {
                    waitedFor = "its descriptor becoming ready (level-triggered; not in the trace as an input)"
                }
            case .timer:
                rules = ["T4", "L-b"]
                if let wake = lastWake, trace.entries[wake].pass == entry.pass, let sleep = lastSleep {
                    let from = trace.entries[sleep].time.nanoseconds, to = trace.entries[wake].time.nanoseconds
                    waitedFor = "its fire date, due at or before t=\(entry.time.nanoseconds) ns: the wait of pass \(entry.pass)"
                        + (from == to ? " ended at once (line \(trace.line(ofEntry: wake)))"
                                      : " moved the clock from \(from) to \(to) ns (line \(trace.line(ofEntry: wake)))")
                } else {
                    waitedFor = "its fire date, due at or before t=\(entry.time.nanoseconds) ns, found by the polling wait of pass \(entry.pass)"
                }
            case .block:
                rules = ["B3"]
                let point = depth > 0 ? "a block point of a run nested in a callout" : "the block point after \(lastBlockPoint) in pass \(entry.pass)"
                if !performs.isEmpty, case .input(let input) = trace.entries[performs[0]].kind, case .perform(let name) = input.action {
                    waitedFor = point + "; the oldest block another thread enqueued that has not run yet is \"\(name)\" at \(describe(performs.removeFirst()))"
                } else {
                    waitedFor = point
                }
            case .job:
                rules = ["B5", "B3"]
                waitedFor = depth > 0 ? "a block point of a run nested in a callout" : "the block point after \(lastBlockPoint) in pass \(entry.pass)"
            case .mainQueue:
                rules = ["X4", "L-c"]
                waitedFor = "work enqueued on the main queue, drained once the queue's descriptor woke the wait of pass \(entry.pass)"
            }
            return CalloutExplanation(line: trace.line(ofEntry: index), pass: entry.pass, mode: entry.mode, time: entry.time,
                                      callout: callout, label: label, rules: rules, waitedFor: waitedFor)
        }
    }
}
