// Compares a CF trace with ours. The only differences forgiven are the declared differences
// of Docs/Rules.md, each by name and each counted:
//
// - L-g  CF's spurious `BT BS BW AW` cycles in which nothing is handled (stale timerfd, leftover
//        wake-up). Removed from CF's trace only where ours has no such cycle (alignment), and only
//        when every observer callout in the cycle was free of side effects. Leftover wake-ups
//        after a run that stopped before its first pass are drained in the CF executor itself
//        (`Execution.wakeDrains`), also counted under L-g.
// - S4   SCF returns the handled flag of the LAST collected source0, we OR them (CF-1153). When
//        a script reaches the S4 condition (marked `<S4>` by the interpreter: a source an
//        enclosing non-rash DoSources0 may still visit loses its signal or validity), a difference
//        after that point is forgiven; everything up to it must match.
// - T8   tolerance: the scripts never set one, so nothing is filtered (count stays 0).
// - F4   Foundation's SPI activity values: the CF executor uses CoreFoundation directly, so
//        nothing is filtered (count stays 0).

struct FilterCounts: Sendable, CustomStringConvertible {
    var lgCycles = 0
    var lgWakeDrains = 0
    /// Scripts that reached the S4 condition, and those among them that differ after it.
    var s4Reached = 0
    var s4Applied = 0
    var t8 = 0
    var f4 = 0

    static func + (a: FilterCounts, b: FilterCounts) -> FilterCounts {
        FilterCounts(lgCycles: a.lgCycles + b.lgCycles, lgWakeDrains: a.lgWakeDrains + b.lgWakeDrains,
                     s4Reached: a.s4Reached + b.s4Reached, s4Applied: a.s4Applied + b.s4Applied,
                     t8: a.t8 + b.t8, f4: a.f4 + b.f4)
    }

    var description: String {
        "L-g: \(lgCycles) spurious cycles removed + \(lgWakeDrains) leftover wake-ups drained; "
            + "S4: \(s4Applied) scripts differ after the S4 point (compared up to it; \(s4Reached) reached it); "
            + "T8: \(t8); F4: \(f4)"
    }
}

struct Comparison: Sendable {
    var matches: Bool
    var filters: FilterCounts
    /// Index in our trace where the first unexplained difference is (nil when matching).
    var divergenceIndex: Int?
    /// How far (seconds) CF ran behind our virtual schedule over the events that matched before
    /// the first difference. Our loop's times are exact; CF's are wall-clock.
    var cfLateness: Double = 0
}

enum TraceComparator {
    static func compare(cf: Execution, ours: Execution, allowSpuriousCycles: Bool) -> Comparison {
        var filters = FilterCounts()
        filters.lgWakeDrains = cf.wakeDrains
        let result = align(cf.trace, ours.trace, cf.times, ours.times, allowSpuriousCycles: allowSpuriousCycles)
        filters.lgCycles = result.skippedCycles
        if let marker = ours.trace.firstIndex(of: .s4Marker) {
            filters.s4Reached = 1
            // S4: a difference AFTER the S4 point is the documented divergence; everything up to
            // and including that point has matched.
            if let divergence = result.divergence, divergence > marker {
                filters.s4Applied = 1
                return Comparison(matches: true, filters: filters, divergenceIndex: nil, cfLateness: result.lateness)
            }
        }
        return Comparison(matches: result.divergence == nil, filters: filters, divergenceIndex: result.divergence,
                          cfLateness: result.lateness)
    }

    /// Walks both traces in step; where they differ, skips a spurious CF cycle (L-g) if allowed.
    /// Returns the index in `ours` of the first unexplained difference (nil: none), the cycles
    /// skipped, and how far CF ran behind our schedule over the events that matched and the first
    /// differing one. On the grid (`allowSpuriousCycles`) deadlines are absolute, so lateness is
    /// absolute; in plain scripts only fixed timeouts exist, so it is measured from the start of
    /// the enclosing run.
    private static func align(_ cfTrace: [TraceEvent], _ ourTrace: [TraceEvent], _ cfTimes: [Double],
                              _ ourTimes: [Double], allowSpuriousCycles: Bool)
        -> (divergence: Int?, skippedCycles: Int, lateness: Double) {
        var skipped = 0
        var i = 0, j = 0
        var lateness = 0.0
        var cfRunStarts: [Double] = [], ourRunStarts: [Double] = []
        func noteLateness(_ i: Int, _ j: Int) {
            let cfBase = allowSpuriousCycles ? 0 : (cfRunStarts.last ?? 0)
            let ourBase = allowSpuriousCycles ? 0 : (ourRunStarts.last ?? 0)
            lateness = max(lateness, (cfTimes[i] - cfBase) - (ourTimes[j] - ourBase))
        }
        func noteMatched(_ i: Int, _ j: Int) {
            guard i < cfTimes.count, j < ourTimes.count else { return }
            if case .runBegin = cfTrace[i] {
                cfRunStarts.append(cfTimes[i])
                ourRunStarts.append(ourTimes[j])
            }
            noteLateness(i, j)
            if case .runEnd = cfTrace[i] {
                _ = cfRunStarts.popLast()
                _ = ourRunStarts.popLast()
            }
        }
        while i < cfTrace.count || j < ourTrace.count {
            if i < cfTrace.count, j < ourTrace.count, cfTrace[i] == ourTrace[j] {
                noteMatched(i, j)
                i += 1; j += 1
                continue
            }
            // L-g: skip a side-effect-free pass skeleton that only CF has. Only grid scripts can
            // have a stale timerfd; plain scripts have no source of spurious cycles left (their
            // leftover wake-ups are drained), so there an extra cycle is a real difference.
            if allowSpuriousCycles, let end = spuriousCycleEnd(cfTrace, from: i) {
                skipped += 1
                i = end
                continue
            }
            // CF's differing event counts too: a CF that reached it later than our schedule may
            // have decided by a deadline that had passed only because CF ran late.
            if i < cfTimes.count, j < ourTimes.count { noteLateness(i, j) }
            return (j, skipped, lateness)
        }
        return (nil, skipped, lateness)
    }

    /// If `trace[start...]` begins with `BT BS BW AW` of one mode (tracer events) interleaved only
    /// with observer callouts that had no actions, returns the index just after the cycle.
    static func spuriousCycleEnd(_ trace: [TraceEvent], from start: Int) -> Int? {
        guard start < trace.count, case .activity(let mode, .beforeTimers) = trace[start] else { return nil }
        let expected: [ScriptActivity] = [.beforeSources, .beforeWaiting, .afterWaiting]
        var next = 0
        var k = start + 1
        while k < trace.count {
            switch trace[k] {
            case .observer(_, _, acted: false):
                k += 1
            case .activity(let m, let a) where m == mode && next < expected.count && a == expected[next]:
                next += 1
                k += 1
            default:
                return next == expected.count ? k : nil
            }
        }
        return next == expected.count ? k : nil
    }

    /// A readable report: the script and both traces, with the point of divergence.
    static func report(script: Script, cf: Execution, ours: Execution, comparison: Comparison) -> String {
        var text = "DIFFERENTIAL MISMATCH seed=\(script.seed)\n\(script)\n"
        text += "--- CFRunLoop (wake drains: \(cf.wakeDrains))\n\(Execution.format(cf.trace))\n"
        text += "--- Loop\n\(Execution.format(ours.trace))\n"
        if let j = comparison.divergenceIndex {
            let context = ours.trace.dropFirst(max(0, j - 6)).prefix(12).map(\.description).joined(separator: " ")
            text += "--- first unexplained difference at our event #\(j): … \(context)\n"
        }
        return text
    }
}
