import LoopAllocationCounter
import RunLoopKit

/// Where a turn's memory peak comes from. A 16 ms timer autoreleases 2000 objects per turn;
/// they stay live until the pool observer pops at BeforeWaiting (order 2147483647). The
/// allocation counter attributes the turn's peak to the timer, the frees to the pool's pop
/// observer, and the pool's own pages apart from both.
enum MemoryPeakAttributionScenario {
    static let objectsPerTurn = 2_000
    static let turns = 5
    /// A `Payload` is a 16-byte object header and 32 bytes of fields: a 48-byte request, a
    /// 56-byte usable block in glibc (48 + 8 rounded up to 16, minus the 8-byte size word).
    static let payloadUsableBytes = 56
    static let timerLabel = "frameTimer"
    static let poolLabel = "_wrapRunLoopWithAutoreleasePoolHandler"
    /// objc4's page: 505 slots; a turn peaks at 1 boundary + 2000 objects = 4 pages, and the
    /// pop frees every page but the boundary's.
    static let pagesPerTurn = (1 + objectsPerTurn + 504) / 505 - 1

    static let scenario = Scenario(
        name: "memory-peak-attribution",
        summary: "a timer autoreleases 2000 objects per turn: the turn's peak is the timer's, freed by the pool's BeforeWaiting pop; pool pages apart",
        unavailableReason: AllocationCounter.isInterposing ? nil : "the allocator is not interposed in a sanitizer build"
    ) { options in
        guard AllocationCounter.isInterposing else {
            return ScenarioOutcome(expected: [], produced: [], checks: [
                ScenarioCheck("the allocator is interposed (not under a sanitizer)", false)
            ]).result(name: "memory-peak-attribution", entries: [])
        }
        let attributor = AllocationAttributor(topSites: 3)
        let session = AllocationCounter.withMode(.generations) { () -> AppSession<Int> in
            AppHarness.session(runner: options.runner) { app in
                let loop = app.loop, clock = app.clock
                var fires = 0
                let n = objectsPerTurn, turns = MemoryPeakAttributionScenario.turns
                // 16 ms is a valid interval; `try!` cannot fail here.
                let timer = try! LoopTimer(after: 0.016, clock: clock, interval: 0.016, label: timerLabel, loop.ownerThreadCallout { timer in
                    for _ in 0..<n { AutoreleasePool.autorelease(Payload()) }
                    fires += 1
                    if fires == turns { timer.invalidate() }
                })
                loop.add(timer, mode: .common)
                attributor.install(on: loop)
                app.runLoop(mode: .default, timeout: 0.016 * Double(turns) + 0.04)
                attributor.uninstall(from: loop)
                timer.invalidate()
                return fires
            }
        }
        let callouts = attributor.callouts
        let withFire = attributor.turns.filter { turn in callouts[turn.callouts].contains { $0.label == timerLabel } }
        let bytes = objectsPerTurn * payloadUsableBytes
        // Every turn: the pop frees the 2000 payloads and the timer holds the most at the peak.
        // Steady turns (2 to 4) to the byte: the first fire also pays one-time runtime setup
        // and the last one invalidates the timer, both allocating a little more.
        let steady = 2...(turns - 1)
        var expected: [String] = []
        for turn in 1...turns {
            expected.append("turn \(turn): observer \(poolLabel) frees \(objectsPerTurn) blocks; at the turn's peak timer \(timerLabel) holds the most live bytes")
            if steady.contains(turn) {
                expected.append("turn \(turn): timer \(timerLabel) allocates \(objectsPerTurn) blocks (\(bytes) B, plus glibc's rounding) and leaves them live; "
                                + "observer \(poolLabel) frees the same \(objectsPerTurn) blocks, byte for byte; pool pages +\(pagesPerTurn) −\(pagesPerTurn)")
            }
        }
        var produced: [String] = []
        var loopOwnPeaks: [Int64] = []
        for (index, turn) in withFire.enumerated() {
            let inTurn = callouts[turn.callouts]
            let timer = inTurn.filter { $0.label == timerLabel }.reduce(AllocationFigures.zero) { $0 + $1.user }
            let timerPages = inTurn.filter { $0.label == timerLabel }.reduce(AllocationFigures.zero) { $0 + $1.poolPages }
            let pop = inTurn.filter { $0.label == poolLabel }.reduce(AllocationFigures.zero) { $0 + $1.user }
            let popPages = inTurn.filter { $0.label == poolLabel }.reduce(AllocationFigures.zero) { $0 + $1.poolPages }
            let top = turn.peakSnapshot.first.map { "\($0.site) holds the most live bytes" } ?? "no snapshot was taken"
            produced.append("turn \(index + 1): observer \(poolLabel) frees \(pop.frees) blocks; at the turn's peak \(top)")
            if steady.contains(index + 1) {
                // glibc may hand out up to 24 bytes more per block (a whole free chunk).
                let rounded = timer.bytes >= UInt64(bytes) && timer.bytes <= UInt64(bytes + 24 * objectsPerTurn)
                produced.append(
                    "turn \(index + 1): timer \(timerLabel) allocates \(timer.allocations) blocks ("
                        + (rounded ? "\(bytes) B, plus glibc's rounding" : "\(timer.bytes) B") + ") and "
                        + (timer.net == Int64(timer.bytes) ? "leaves them live" : "leaves \(timer.net) B live") + "; "
                        + "observer \(poolLabel) frees "
                        + (pop.frees == timer.allocations && pop.freedBytes == timer.bytes
                            ? "the same \(pop.frees) blocks, byte for byte" : "\(pop.frees) blocks (\(pop.freedBytes) B)") + "; "
                        + "pool pages +\(timerPages.allocations) −\(popPages.frees)")
            }
            loopOwnPeaks.append(turn.user.peak - timer.peak)
        }
        var outcome = ScenarioOutcome(expected: expected, produced: produced, checks: [
            ScenarioCheck("the timer fired \(turns) times", session.value == turns && withFire.count == turns,
                          "\(session.value) fires, \(withFire.count) turns with a fire"),
            ScenarioCheck("each turn's peak is the timer's peak plus under one page of the loop's own",
                          loopOwnPeaks.count == turns && loopOwnPeaks.allSatisfy { $0 >= 0 && $0 < 4096 },
                          "turn peak − timer peak: \(loopOwnPeaks)"),
            ScenarioCheck("pool pages are reported apart: the timer's pages are in poolPages, never in its user bytes",
                          callouts.filter { $0.label == timerLabel }.allSatisfy { $0.poolPages.allocations >= UInt64(pagesPerTurn) }
                              && callouts.filter { $0.label == poolLabel }.allSatisfy { $0.poolPages.allocations == 0 },
                          "timer page allocations \(callouts.filter { $0.label == timerLabel }.map(\.poolPages.allocations))"),
            session.releaseCheck,
        ])
        outcome.artifacts = [
            ScenarioArtifact(fileName: "memory-peak-attribution-by-callout.svg", contents: MemoryByCalloutChart.svg(
                callouts: callouts, turns: attributor.turns,
                title: "memory-peak-attribution: bytes allocated per turn by callout")),
            ScenarioArtifact(fileName: "memory-peak-attribution-table.txt",
                             contents: AllocationTable.bySite(callouts) + "\n" + AllocationTable.turns(attributor.turns)),
            ScenarioArtifact(fileName: "memory-peak-attribution-memory.json",
                             contents: ChromeTraceExporter.json(session.entries, allocations: attributor,
                                                                processName: "memory-peak-attribution")),
        ]
        return outcome.result(name: "memory-peak-attribution", entries: session.entries, inputs: session.inputs)
    }
}
