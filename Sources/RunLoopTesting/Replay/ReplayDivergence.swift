/// The first place where a replay differs from the recorded trace.
///
/// ```swift
/// if let divergence = outcome.divergence { print(divergence) }
/// // line 7 (pass 2): expected callout … label="t0", got callout … label="s0"
/// ```
public struct ReplayDivergence: Sendable, Equatable, CustomStringConvertible {
    /// The line of the recorded trace file where they part (one past its last entry when the
    /// replay made more entries than were recorded).
    public let line: Int
    /// Index of the first differing entry.
    public let entryIndex: Int
    /// The recorded entry there, as its trace line; nil when the recording had ended.
    public let expected: String?
    /// The replayed entry there; nil when the replay ended early.
    public let actual: String?
    /// The pass of the recorded entry (of the replayed one when the recording had ended).
    public let pass: UInt64

    public init(line: Int, entryIndex: Int, expected: String?, actual: String?, pass: UInt64) {
        self.line = line
        self.entryIndex = entryIndex
        self.expected = expected
        self.actual = actual
        self.pass = pass
    }

    public var description: String {
        "line \(line) (pass \(pass)): expected \(expected ?? "the end of the trace"), got \(actual ?? "the end of the replay")"
    }

    /// The first divergence of `actual` from `expected`, or nil when both hold the same entries.
    public static func first(expected: ReplayTrace, actual: ReplayTrace) -> ReplayDivergence? {
        let shared = min(expected.entries.count, actual.entries.count)
        var index = 0
        while index < shared && expected.entries[index] == actual.entries[index] { index += 1 }
        if index == shared && expected.entries.count == actual.entries.count {
            if expected.clockStart == actual.clockStart { return nil }
            return ReplayDivergence(line: 2, entryIndex: -1, expected: "clock start=\(expected.clockStart.nanoseconds)",
                                    actual: "clock start=\(actual.clockStart.nanoseconds)", pass: 0)
        }
        let recorded = index < expected.entries.count ? expected.entries[index] : nil
        let replayed = index < actual.entries.count ? actual.entries[index] : nil
        return ReplayDivergence(line: expected.line(ofEntry: index), entryIndex: index, expected: recorded?.line,
                                actual: replayed?.line, pass: (recorded ?? replayed)?.pass ?? 0)
    }
}
