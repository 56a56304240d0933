import Testing

@Suite struct Scratch {
    @Test func quick() async {
        let start = ContinuousClock.now
        let outcomes = await ScriptRunner.differential(firstSeed: 1, count: 2000, workers: 8)
        var filters = FilterCounts()
        var bad = 0
        for o in outcomes {
            filters = filters + o.comparison.filters
            if !o.comparison.matches {
                bad += 1
                if bad <= 12 { print(TraceComparator.report(script: o.script, cf: o.cf, ours: o.ours, comparison: o.comparison)) }
            }
        }
        print("mismatches \(bad)/\(outcomes.count) retries \(outcomes.map(\.timingRetries).reduce(0,+)) \(filters) in \(ContinuousClock.now - start)")
        print("bad grid seeds: \(outcomes.filter { !$0.comparison.matches && $0.script.usesTimeGrid }.map(\.script.seed))")
        print("bad seeds: \(outcomes.filter { !$0.comparison.matches }.map(\.script.seed))")
    }
}
