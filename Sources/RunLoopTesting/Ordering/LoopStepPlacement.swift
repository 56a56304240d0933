import RunLoopKit

/// A step as it happened: where in the trace, in which pass of the loop, and the rule that put it
/// there. Made from any trace (a live `TraceRecorder`, or a trace read back), so the same
/// assertions work on both.
///
/// ```swift
/// for placement in LoopStepPlacement.placements(in: recorder.entries) {
///     print(placement.step, placement.pass, placement.rule)
/// }
/// ```
public struct LoopStepPlacement: Sendable, Equatable, CustomStringConvertible {
    public let step: LoopStep
    /// The loop's pass (`Loop.passCount`) the step belongs to; Entry belongs to the run's
    /// first pass.
    public let pass: UInt64
    /// The loop clock when it was recorded.
    public let time: LoopInstant
    /// Why it is where it is.
    public let rule: LoopRuleCitation
    /// The trace entry it came from (a commit gives several steps).
    public let sequence: UInt64

    public init(step: LoopStep, pass: UInt64, time: LoopInstant, rule: LoopRuleCitation, sequence: UInt64) {
        self.step = step
        self.pass = pass
        self.time = time
        self.rule = rule
        self.sequence = sequence
    }

    /// The step, its pass and the rule that placed it, e.g. "timer(t1) in pass 3 — L-b: …".
    public var description: String { "\(step) in pass \(pass) — \(rule)" }

    /// The steps of `entries` that `selection` shows, each with its pass and rule.
    public static func placements(in entries: [TraceEntry], selection: LoopStepSelection = .all) -> [LoopStepPlacement] {
        let window = selection.window(entries)
        var attribution = RuleAttribution(entries)
        var placements: [LoopStepPlacement] = []
        for (index, entry) in entries.enumerated() {
            let placed = attribution.place(entry, at: index)
            guard window?.contains(entry.sequence) ?? true else { continue }
            placements += placed.filter { selection.shows($0.step) }
        }
        return placements
    }
}
