import RunLoopKit

/// The failure text of an ordering assertion: the expected steps aligned with the ones that
/// happened, and for each step out of place the pass it ran in and the rule that put it there.
///
/// ```text
/// Loop steps differ from the expected order (3 expected, 3 happened): 1 out of place, 0 missing, 0 unexpected.
///     #1 pass 1  entry
///   - source(s) — expected here; it happened at #3 in pass 1 (S2)
///     #2 pass 1  timer(t1)
///   + #3 pass 1  source(s) — S2: signalled sources0 run after BeforeSources and the first blocks, by order; expected earlier
/// Actual steps: entry · timer(t1) · source(s)
/// ```
///
/// Lines: `#n` is the step's position among the steps that happened; `  ` a step in place, `+ ` a
/// step that happened where none (or another) was expected, `- ` an expected step that did not
/// happen there.
enum LoopStepDiff {
    /// nil when `actual` is exactly `expected`.
    static func text(expected: [LoopStep], actual: [LoopStepPlacement]) -> String? {
        let produced = actual.map(\.step)
        guard produced != expected else { return nil }
        let alignment = TraceDiff.alignment(expected: expected, produced: produced)

        // Pair each missing step with an unexpected occurrence of the same step: together they
        // are one step out of place.
        var partnerOfMissing: [Int: Int] = [:]   // alignment index of `-` → of `+`
        var partnerOfExtra: [Int: Int] = [:]
        for (position, step) in alignment.enumerated() {
            guard case .missing(let i) = step else { continue }
            let match = alignment.indices.first { other in
                guard partnerOfExtra[other] == nil, case .extra(let j) = alignment[other] else { return false }
                return produced[j] == expected[i]
            }
            if let match {
                partnerOfMissing[position] = match
                partnerOfExtra[match] = position
            }
        }

        let widest = actual.map { $0.pass }.max().map { String($0).count } ?? 1
        func numberAndPass(_ j: Int) -> String {
            let pass = String(actual[j].pass)
            return "#\(j + 1) pass \(pass)" + String(repeating: " ", count: widest - pass.count)
        }
        var lines: [String] = []
        for (position, step) in alignment.enumerated() {
            switch step {
            case .same(_, let j):
                lines.append("    \(numberAndPass(j))  \(produced[j])")
            case .extra(let j):
                let placement = actual[j]
                let note: String
                if let partner = partnerOfExtra[position] {
                    note = partner < position ? "expected earlier" : "expected later"
                } else {
                    note = "not expected"
                }
                lines.append("  + \(numberAndPass(j))  \(placement.step) — \(placement.rule); \(note)")
            case .missing(let i):
                if let partner = partnerOfMissing[position], case .extra(let j) = alignment[partner] {
                    let placement = actual[j]
                    let rule = placement.rule.id.map { " (\($0))" } ?? ""
                    lines.append("  - \(expected[i]) — expected here; it happened at #\(j + 1) in pass \(placement.pass)\(rule)")
                } else {
                    lines.append("  - \(expected[i]) — expected here; \(neverHappened(expected[i], in: produced))")
                }
            }
        }
        let outOfPlace = partnerOfMissing.count
        let missing = alignment.filter { if case .missing = $0 { true } else { false } }.count - outOfPlace
        let unexpected = alignment.filter { if case .extra = $0 { true } else { false } }.count - outOfPlace
        let header = "Loop steps differ from the expected order (\(expected.count) expected, \(produced.count) happened): "
            + "\(outOfPlace) out of place, \(missing) missing, \(unexpected) unexpected."
        let actualLine = "Actual steps: " + (produced.isEmpty ? "(none)" : produced.map(\.description).joined(separator: " · "))
        return ([header] + lines + [actualLine]).joined(separator: "\n")
    }

    /// Why an expected step may be absent altogether, naming the rule that would have produced it.
    static func neverHappened(_ step: LoopStep, in produced: [LoopStep]) -> String {
        switch step {
        case .activity(let activity) where activity == .beforeWaiting || activity == .afterWaiting:
            return "it did not happen: no pass waited (L-a: a pass that handled a source0, or a polling run, does not wait)"
        case .callout(.timer, _):
            return "it did not happen: a timer fires only after a wait that reached its deadline (L-b); advance the clock past it"
        case .callout(.source0, _):
            return "it did not happen: a source0 runs only once signalled (S1)"
        case .layout, .display, .commit:
            let committed = produced.contains(.commit)
            return committed
                ? "it did not happen: no commit in this trace included it (TX1: a commit carries what was marked before it)"
                : "it did not happen: nothing was committed (TX7: with nothing marked a commit does nothing)"
        default:
            return "it did not happen"
        }
    }
}
