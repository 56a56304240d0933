import Testing
@testable import LoopAllocationCounter
import LoopInstruments
import RunLoopCore

/// The table, the chart and the Chrome counter tracks, from hand-made records (no allocator).
@Suite struct OutputTests {
    static func record(_ label: String, turn: Int, bytes: UInt64, start: UInt64, end: UInt64) -> CalloutAllocation {
        CalloutAllocation(kind: .callout(.timer), label: label, turn: turn, depth: 0,
                          start: LoopInstant(nanoseconds: start), end: LoopInstant(nanoseconds: end), liveBytesAtEnd: Int64(bytes),
                          user: AllocationFigures(allocations: 2, frees: 1, bytes: bytes, freedBytes: 24, requestedBytes: bytes,
                                                  net: Int64(bytes) - 24, peak: Int64(bytes)),
                          poolPages: .zero, sampledBytes: 0)
    }

    static let callouts = [record("tick", turn: 1, bytes: 4000, start: 1_000, end: 3_000),
                           record("tick", turn: 2, bytes: 6000, start: 5_000, end: 9_000)]
    static let turns = [
        TurnAllocation(number: 1, passes: 1...1, start: LoopInstant(nanoseconds: 0), end: LoopInstant(nanoseconds: 4_000),
                       liveBytesAtEnd: 3976, user: callouts[0].user, poolPages: .zero, sampledBytes: 0, outsideCallouts: .zero,
                       callouts: 0..<1, peakSnapshot: []),
        TurnAllocation(number: 2, passes: 2...2, start: LoopInstant(nanoseconds: 4_000), end: LoopInstant(nanoseconds: 10_000),
                       liveBytesAtEnd: 9952, user: callouts[1].user, poolPages: .zero, sampledBytes: 0, outsideCallouts: .zero,
                       callouts: 1..<2, peakSnapshot: [SiteLiveBytes(site: AllocationSite(kind: "timer", label: "tick"), bytes: 6000, blocks: 0)]),
    ]

    @Test func tableSumsBySite() {
        let lines = AllocationTable.bySite(Self.callouts).split(separator: "\n")
        #expect(lines.count == 2)
        let row = lines[1].split(separator: " ").map(String.init)
        // site, callouts, allocs, frees, bytes, freed, net, max peak, pool pages
        #expect(row == ["timer", "tick", "2", "4", "2", "10000", "48", "9952", "6000", "0"])
        #expect(AllocationTable.turns(Self.turns).contains("timer tick (6000 B)"))
    }

    @Test func chartStacksTheSiteAndMarksThePeaks() {
        let svg = MemoryByCalloutChart.svg(callouts: Self.callouts, turns: Self.turns, title: "t")
        #expect(svg.hasPrefix("<?xml"))
        #expect(svg.contains("turn 1: timer tick allocated 4000 B"))
        #expect(svg.contains("turn 2: peak 6000 B above its start"))
    }

    @Test func chromeCounterTracksCarryTheFigures() {
        let events = ChromeTraceExporter.allocationEvents(callouts: Self.callouts, turns: Self.turns)
        #expect(events.contains { $0.contains("\"callout memory\"") && $0.contains("\"allocated\":4000") && $0.contains("\"ts\":1") })
        #expect(events.contains { $0.contains("\"live bytes\"") && $0.contains("\"user\":6000") })
        #expect(events.contains { $0.contains("\"turn memory\"") && $0.contains("\"peak\":6000") })
        // Each callout's track returns to 0 at its end.
        #expect(events.filter { $0.contains("\"callout memory\"") && $0.contains("\"allocated\":0") }.count == 2)
    }
}
