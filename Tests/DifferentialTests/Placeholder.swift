import Testing

@Suite struct ScratchCF {
    @Test func cfShow() {
        var stats = [String: Int]()
        for seed in UInt64(1)...60 {
            let script = ScriptGenerator.make(seed: seed)
            let a = ScriptRunner.runOnCF(script)
            if seed <= 3 || (script.usesTimeGrid && stats["grid", default: 0] < 2) {
                print("SEED \(seed)\n\(script)\n--- (drains \(a.wakeDrains) viol \(a.timingViolation ?? "-"))\n\(Execution.format(a.trace))\n")
            }
            if script.usesTimeGrid { stats["grid", default: 0] += 1 }
            stats["drains", default: 0] += a.wakeDrains
            if a.timingViolation != nil { stats["viol", default: 0] += 1 }
            if a.trace.contains(.s4Marker) { stats["s4", default: 0] += 1 }
            stats["events", default: 0] += a.trace.count
        }
        print(stats)
    }
}
