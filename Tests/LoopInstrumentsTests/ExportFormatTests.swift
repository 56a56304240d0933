import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import RunLoopCore
@testable import LoopInstruments

let python3Path: String? = {
    let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/python3" }
    return (path + ["/usr/bin/python3"]).first { FileManager.default.isExecutableFile(atPath: $0) }
}()

@Suite struct ChromeTraceTests {
    func sampleTrace() -> TraceRecorder {
        let recorder = TraceRecorder(clock: ManualClock())
        let s = EventScript(recorder: recorder)
        s.runBegin(); s.activity(.entry); s.activity(.beforeTimers)
        s.callout(.source0, "say \"hi\"\n\\") { recorder.log("tab\there") }
        s.time = at(ns: 2_500)
        s.begin(.block, "outer")
        s.begin(.timer, "inner")
        s.end(.timer, "inner")
        s.end(.block, "outer")
        s.end(.source0, "orphan end")            // begin was never seen: must be dropped
        s.activity(.beforeWaiting)
        recorder.record(MemorySample(time: at(ns: 2_600), label: "BW", pool: PoolSnapshot(pendingEntries: 12, pages: 1, bytes: 4096),
                                     residentBytes: 1 << 20, heapInUseBytes: 1 << 19))
        recorder.record(CommitRecord(frame: 1, reason: "BeforeWaiting",
                                     phases: [.init(name: "layout", layers: ["v"], start: at(ns: 2_600), end: at(ns: 3_600))]))
        s.recordSleep()
        s.time = at(ns: 10_000)
        s.begin(.observer, "still open")          // never ends: closed at the last time
        return recorder
    }

    func parse(_ json: String) throws -> [[String: Any]] {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8))
        let root = try #require(object as? [String: Any])
        return try #require(root["traceEvents"] as? [[String: Any]])
    }

    @Test func documentParsesBackWithBalancedSlices() throws {
        let events = try parse(sampleTrace().chromeTraceJSON())
        let phases = events.compactMap { $0["ph"] as? String }
        #expect(phases.filter { $0 == "B" }.count == phases.filter { $0 == "E" }.count)
        #expect(phases.contains("C") && phases.contains("X") && phases.contains("i") && phases.contains("M"))
        let names = events.compactMap { $0["name"] as? String }
        #expect(names.contains("say \"hi\"\n\\"))
        #expect(names.contains("tab\there"))
        #expect(names.contains("kCFRunLoopBeforeWaiting"))
        #expect(!names.contains("orphan end"))
        // Per thread, E events close B events in LIFO order.
        var stack: [String] = []
        for event in events where event["tid"] as? Int == 1 {
            switch event["ph"] as? String {
            case "B": stack.append(event["name"] as! String)
            case "E": #expect(stack.popLast() == event["name"] as? String)
            default: break
            }
        }
        #expect(stack.isEmpty)
    }

    @Test func timestampsAreMicroseconds() throws {
        let events = try parse(sampleTrace().chromeTraceJSON())
        let outer = try #require(events.first { $0["name"] as? String == "outer" && $0["ph"] as? String == "B" })
        #expect((outer["ts"] as? Double) == 2.5)
        let layout = try #require(events.first { $0["ph"] as? String == "X" })
        #expect((layout["dur"] as? Double) == 1.0)
        let counter = try #require(events.first { $0["name"] as? String == "pool entries" })
        #expect((counter["args"] as? [String: Any])?["pending"] as? Int == 12)
    }

    /// Skipped (and reported as skipped) where python3 is missing; the parse-back tests above
    /// still check validity there.
    @Test(.enabled(if: python3Path != nil, "python3 not installed"))
    func pythonJSONToolAcceptsTheDocument() throws {
        let python = try #require(python3Path)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("instruments-\(getpid())-trace.json").path
        try OutputFile.write(sampleTrace().chromeTraceJSON(), to: file)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-m", "json.tool", file]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test func escapesControlCharacters() {
        #expect(JSONText.string("a\u{1}b\"c") == "\"a\\u0001b\\\"c\"")
        #expect(JSONText.microseconds(1_234_567) == "1234.567")
        #expect(JSONText.number(.nan) == "0")
    }
}

@Suite struct SVGChartTests {
    func sawtooth(turns: Int, perTurn: Int) -> TraceRecorder {
        let recorder = TraceRecorder(clock: ManualClock())
        var s = EventScript(recorder: recorder)
        var t: UInt64 = 0
        for turn in 0..<turns {
            s.pass = UInt64(turn + 1)
            s.time = at(ns: t)
            s.activity(.afterWaiting)
            s.callout(.source0, "work & <stuff>") { s.time = at(ns: t + 3_000_000) }
            recorder.record(MemorySample(time: at(ns: t + 3_000_000), label: "peak", pool: PoolSnapshot(pendingEntries: perTurn),
                                         residentBytes: 8 << 20, heapInUseBytes: 4 << 20))
            s.time = at(ns: t + 3_000_000)
            s.activity(.beforeWaiting)
            recorder.record(MemorySample(time: at(ns: t + 3_000_001), label: "after pop", pool: PoolSnapshot(pendingEntries: 0),
                                         residentBytes: 8 << 20, heapInUseBytes: 4 << 20))
            s.recordSleep()
            t += 16_000_000
        }
        return recorder
    }

    @Test func memoryChartIsWellFormedWithOnePointPerSampleAndOneLinePerTurn() throws {
        let svg = sawtooth(turns: 4, perTurn: 100).memoryChartSVG(title: "Autorelease sawtooth")
        let counts = try #require(XMLElementCounter.count(svg))
        #expect(counts.counts["svg"] == 1)
        #expect(counts.counts["circle"] == 8)
        #expect(counts.counts["polyline"] == 1)
        #expect(svg.components(separatedBy: "<title>end of turn ").count - 1 == 4)
        #expect(counts.texts.contains("Autorelease sawtooth"))
        #expect(counts.texts.contains("time since the first sample (ms)"))
        #expect(counts.texts.contains("pool entries"))
    }

    @Test func memoryChartInOrderModeAndBytes() throws {
        let svg = MemoryChart.svg(sawtooth(turns: 2, perTurn: 10).entries, metrics: [.residentBytes, .heapInUseBytes],
                                  xAxis: .order)
        let counts = try #require(XMLElementCounter.count(svg))
        #expect(counts.counts["polyline"] == 2)
        #expect(counts.texts.contains("sample number (in the order taken)"))
        #expect(counts.texts.contains("MiB"))
    }

    @Test func emptyChartsAreStillValid() throws {
        #expect(XMLElementCounter.count(MemoryChart.svg([])) != nil)
        #expect(XMLElementCounter.count(TurnTimelineChart.svg([])) != nil)
    }

    @Test func timelineHasOneRowPerTurnAndOneBarPerCallout() throws {
        let svg = sawtooth(turns: 3, perTurn: 1).turnTimelineSVG(title: "timeline")
        let counts = try #require(XMLElementCounter.count(svg))
        #expect(counts.texts.filter { $0.hasPrefix("turn ") }.count == 3)
        #expect(svg.components(separatedBy: "<title>source0 work &amp; &lt;stuff&gt;").count - 1 == 3)
        #expect(counts.texts.contains("AW") && counts.texts.contains("BW"))
    }

    @Test func timelineLimitsRowsAndSaysSo() throws {
        let svg = sawtooth(turns: 5, perTurn: 1).turnTimelineSVG(maxTurns: 2)
        let counts = try #require(XMLElementCounter.count(svg))
        #expect(counts.texts.filter { $0.hasPrefix("turn ") }.count == 2)
        #expect(counts.texts.contains("… 3 more turns not shown"))
    }

    @Test func niceTicks() {
        #expect(AxisTicks.ticks(upTo: 95) == [0, 20, 40, 60, 80, 100])
        #expect(AxisTicks.ticks(upTo: 0) == [0, 0.2])
    }
}
