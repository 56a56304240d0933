import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import RunLoopCore
import Testing
@testable import LoopInstruments

/// The charts as a reader sees them: turn-end lines after each turn's samples, an x axis that
/// ends at the last sample, no label cut short, and virtual-clock durations that mean something.
@Suite struct ChartReadabilityTests {
    /// A virtual-clock sawtooth shaped like the scenario's: per turn AfterWaiting and a sample,
    /// the timer (which may move the clock), BeforeWaiting, a sample before the pool pop and one
    /// after it, then the sleep. The clock moves only across the sleeps (16 ms).
    func virtualSawtooth(turns: Int) -> TraceRecorder {
        let recorder = TraceRecorder(clock: ManualClock())
        var s = EventScript(recorder: recorder)
        s.time = .zero
        s.runBegin()
        s.activity(.entry)
        for turn in 1...turns {
            s.pass = UInt64(turn)
            if turn > 1 { s.wake(); s.activity(.afterWaiting) }
            sample(recorder, s.time, "turn start", entries: 1)
            s.activity(.beforeTimers)
            s.callout(.timer, "frameTimer")
            s.activity(.beforeSources)
            s.activity(.beforeWaiting)
            sample(recorder, s.time, "before pool pop", entries: 2001)
            s.callout(.observer, "_wrapRunLoopWithAutoreleasePoolHandler")
            sample(recorder, s.time, "after pool pop", entries: 1)
            s.recordSleep()
            s.time = s.time.advanced(by: .milliseconds(16))
        }
        s.activity(.exit)
        s.runEnd(.finished)
        return recorder
    }

    func sample(_ recorder: TraceRecorder, _ time: LoopInstant, _ label: String, entries: Int) {
        recorder.record(MemorySample(time: time, label: label, pool: PoolSnapshot(pendingEntries: entries),
                                     residentBytes: 0, heapInUseBytes: 0))
    }

    @Test func memoryChartOnAVirtualClockIsPlottedByTurnWithEveryTurnEndAfterItsSamples() throws {
        let svg = MemoryChart.svg(virtualSawtooth(turns: 4).entries, title: "sawtooth")
        let doc = try #require(SVGElements.parse(svg))
        #expect(doc.texts.contains("loop turn (each turn's samples in the order taken)"))
        #expect(!doc.texts.contains { $0.contains("sample #") })
        let circles = doc.elements("circle")
        #expect(circles.count == 12)
        let ends = doc.elements("line").filter { $0.title?.hasPrefix("end of turn ") == true }
        #expect(ends.count == 3, "the last turn's end lies past the last sample, outside the chart")
        for end in ends {
            let turn = try #require(Int(end.title!.dropFirst("end of turn ".count).prefix { $0.isNumber }))
            let x = end.number("x1")
            let own = circles.filter { $0.title?.hasPrefix("turn \(turn),") == true }.map { $0.number("cx") }
            let next = circles.filter { $0.title?.hasPrefix("turn \(turn + 1),") == true }.map { $0.number("cx") }
            #expect(own.count == 3 && !next.isEmpty)
            // After the turn's last sample (the one after the BeforeWaiting pop), before the next turn's first.
            #expect(x > own.max()!, "turn \(turn) ends at x \(x), its last sample is at \(own.max()!)")
            #expect(x < next.min()!)
        }
    }

    @Test func memoryChartXAxisEndsAtTheLastSample() throws {
        for axis in [ChartXAxis.automatic, .turns, .order, .time] {
            let svg = MemoryChart.svg(virtualSawtooth(turns: 3).entries, xAxis: axis, width: 900)
            let doc = try #require(SVGElements.parse(svg))
            let lastX = try #require(doc.elements("circle").map { $0.number("cx") }.max())
            // The x axis is the horizontal black line along the bottom of the plot.
            let axisLine = try #require(doc.elements("line").first {
                $0.attributes["stroke"] == "#333" && $0.number("y1") == $0.number("y2")
            })
            #expect(axisLine.number("x2") == lastX, "\(axis): the axis ends at \(axisLine.number("x2")), the last sample is at \(lastX)")
            // No tick mark beyond the last sample.
            let ticks = doc.elements("line").filter { $0.attributes["stroke"] == "#555" }
            #expect(!ticks.isEmpty)
            #expect(ticks.allSatisfy { $0.number("x1") <= lastX + 0.05 }, "\(axis): a tick lies past the last sample")
        }
    }

    @Test func memoryChartTurnEndsFollowTheSamplesOnATimeAxisToo() throws {
        // Real-clock-like: every sample has its own instant, the sleep a nanosecond before the
        // sample after the pop (as a coarse clock may read); the turn still ends after that sample.
        let recorder = TraceRecorder(clock: ManualClock())
        let s = EventScript(recorder: recorder)
        for turn in 0..<3 {
            let t = UInt64(turn) * 16_000_000 + 1_000
            s.time = at(ns: t)
            s.activity(.afterWaiting)
            sample(recorder, at(ns: t + 10), "start", entries: 1)
            s.time = at(ns: t + 3_000_000)
            s.activity(.beforeWaiting)
            sample(recorder, at(ns: t + 3_000_000), "before pop", entries: 500)
            sample(recorder, at(ns: t + 3_000_002), "after pop", entries: 1)
            s.time = at(ns: t + 3_000_001)
            s.recordSleep()
        }
        let doc = try #require(SVGElements.parse(MemoryChart.svg(recorder.entries)))
        #expect(doc.texts.contains("time since the first sample (ms)"))
        let circles = doc.elements("circle").map { $0.number("cx") }.sorted()
        let ends = doc.elements("line").filter { $0.title?.hasPrefix("end of turn ") == true }.map { $0.number("x1") }
        #expect(ends.count == 3)
        for (index, x) in ends.enumerated() {
            #expect(x >= circles[index * 3 + 2], "turn \(index + 1) ends before its last sample")
        }
    }

    @Test func timelineNeverCutsALabelAndEveryKeyIsInTheLegend() throws {
        let names = ["_UIGestureRecognizerUpdateObserver", "_beforeCACommitHandler", "CA::Transaction::observer_callback",
                     "_afterCACommitHandler", "_wrapRunLoopWithAutoreleasePoolHandler"]
        let recorder = TraceRecorder(clock: ManualClock())
        let s = EventScript(recorder: recorder)
        s.runBegin()
        s.activity(.entry)
        s.callout(.source1, "__IOHIDEventSystemClientQueueCallback")
        recorder.log("a log line long enough to need a key when the row is narrow")
        s.activity(.beforeWaiting)
        for name in names { s.callout(.observer, name) }
        s.recordSleep()
        for width in [600, 1000, 2400] {
            let svg = TurnTimelineChart.svg(recorder.entries, width: width)
            let doc = try #require(SVGElements.parse(svg))
            #expect(!doc.texts.contains { $0.contains("…") && !$0.hasSuffix("more turns not shown") },
                    "width \(width): a label was cut")
            let keys = Set(doc.texts.filter { $0.hasPrefix("[") && $0.hasSuffix("]") })
            let legend = doc.texts.drop { $0 != "labels too long for their bar or marker:" }
            for key in keys {
                // Each key appears in the legend, followed by its full text.
                let index = try #require(legend.firstIndex(of: key), "width \(width): key \(key) missing from the legend")
                #expect(legend.index(after: index) < legend.endIndex)
            }
            // Every callout name is readable somewhere: on its bar or in the legend.
            for name in names + ["__IOHIDEventSystemClientQueueCallback"] {
                #expect(doc.texts.contains { $0 == name || $0.hasPrefix(name + " (") }, "width \(width): \(name) not readable")
            }
            if width == 2400 { #expect(keys.isEmpty, "a wide chart has room for every label") }
            if width == 600 { #expect(!keys.isEmpty) }
        }
    }

    @Test func virtualClockRowsShowPassesOrVirtualTimeNeverZeroMilliseconds() throws {
        let recorder = TraceRecorder(clock: ManualClock())
        var s = EventScript(recorder: recorder)
        s.runBegin()
        s.activity(.entry)
        s.activity(.beforeWaiting)
        s.recordSleep()
        // Turn 2 at 100 ms: the callout moves the virtual clock by 20 ms.
        s.time = at(ms: 100)
        s.pass = 2
        s.wake()
        s.activity(.afterWaiting)
        s.callout(.source0, "__handleEventQueue") { s.time = s.time.advanced(by: .milliseconds(20)) }
        s.pass = 3
        s.activity(.beforeWaiting)
        s.recordSleep()
        // Turn 3: nothing moves the clock.
        s.pass = 4
        s.wake()
        s.activity(.afterWaiting)
        s.callout(.timer, "tick")
        s.activity(.exit)
        s.runEnd(.finished)

        let doc = try #require(SVGElements.parse(TurnTimelineChart.svg(recorder.entries)))
        #expect(!doc.texts.contains { $0.contains("0.000 ms") })
        #expect(doc.texts.contains("awake 20 ms"))
        #expect(doc.texts.contains("+20 ms"), "the order axis says where the clock moved")
        #expect(doc.texts.filter { $0 == "clock did not move" }.count == 2)
        #expect(doc.texts.contains("2 passes (#2–3)"))
        #expect(doc.texts.contains("at 100 ms") && doc.texts.contains("at 120 ms"))
        #expect(doc.texts.contains { $0.contains("x: order of events within the turn") }, "a virtual clock gets the order axis")
    }

    @Test func durationsReadAsAPersonWouldSayThem() {
        #expect(ChartText.duration(20_000_000) == "20 ms")
        #expect(ChartText.duration(1_500_000) == "1.5 ms")
        #expect(ChartText.duration(47_300) == "47.3 µs")
        #expect(ChartText.duration(800) == "800 ns")
        #expect(ChartText.duration(1_250_000_000) == "1.25 s")
    }
}

/// The elements of an SVG document with their attributes, `<title>` and text content.
final class SVGElements: NSObject, XMLParserDelegate {
    struct Element {
        var name: String
        var attributes: [String: String]
        var title: String?
        var text = ""
        func number(_ attribute: String) -> Double { Double(attributes[attribute] ?? "") ?? .nan }
    }

    private(set) var all: [Element] = []
    private var open: [Int] = []
    private var inTitle = false

    var texts: [String] { all.filter { $0.name == "text" }.map(\.text) }
    func elements(_ name: String) -> [Element] { all.filter { $0.name == name } }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if name == "title" { inTitle = true; return }
        all.append(Element(name: name, attributes: attributes))
        open.append(all.count - 1)
    }
    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard let index = open.last else { return }
        if inTitle { all[index].title = (all[index].title ?? "") + string } else { all[index].text += string }
    }
    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "title" { inTitle = false; return }
        open.removeLast()
    }

    /// Parses `svg`; nil when it is not well-formed.
    static func parse(_ svg: String) -> SVGElements? {
        let collector = SVGElements()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = collector
        return parser.parse() ? collector : nil
    }
}
