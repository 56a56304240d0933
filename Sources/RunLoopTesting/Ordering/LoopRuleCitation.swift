/// The rule that put a step where it is: an id defined in `Docs/Rules.md` and the rule's
/// reason in a few words. Steps the test itself produced outside any callout have no id.
///
/// ```swift
/// let citation = LoopRuleCitation(id: "L-b", reason: "timers fire only after a wait")
/// print(citation)   // L-b: timers fire only after a wait
/// ```
public struct LoopRuleCitation: Sendable, Equatable, CustomStringConvertible {
    /// A rule id of `Docs/Rules.md` (`L-b`, `TX6` …), or nil when no loop rule placed the step.
    public let id: String?
    public let reason: String

    public init(id: String?, reason: String) {
        self.id = id
        self.reason = reason
    }

    public var description: String { id.map { "\($0): \(reason)" } ?? reason }
}
