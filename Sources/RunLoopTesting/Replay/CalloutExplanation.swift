import RunLoopKit

/// Why one callout of a trace ran when it did: the rules that placed it and what it waited for.
///
/// ```swift
/// for explanation in TraceExplainer.explain(trace) { print(explanation.text) }
/// ```
public struct CalloutExplanation: Sendable, Equatable {
    /// The trace line of the callout.
    public let line: Int
    public let pass: UInt64
    public let mode: String
    public let time: LoopInstant
    public let callout: LoopEvent.Callout
    public let label: String
    /// Ids defined in `Docs/Rules.md`, the one that decides the moment first.
    public let rules: [String]
    /// What the callout waited for, naming the trace line of the input or activity when there is one.
    public let waitedFor: String

    public init(line: Int, pass: UInt64, mode: String, time: LoopInstant, callout: LoopEvent.Callout,
                label: String, rules: [String], waitedFor: String) {
        self.line = line
        self.pass = pass
        self.mode = mode
        self.time = time
        self.callout = callout
        self.label = label
        self.rules = rules
        self.waitedFor = waitedFor
    }

    /// Two lines: where the callout is, then its rules and what it waited for.
    public var text: String {
        let kind = ReplayTraceText.calloutName(callout)
        let rulesText = rules.map { "\($0) (\(TraceExplainer.ruleTitles[$0] ?? "see Docs/Rules.md"))" }.joined(separator: ", ")
        return "line \(line)  pass \(pass)  t=\(time.nanoseconds) ns  \(mode)  \(kind) \"\(label)\"\n"
            + "    rules: \(rulesText)\n"
            + "    waited for: \(waitedFor)"
    }
}
