import RunLoopCore

/// SVG timeline with one row per loop turn: callouts as bars stacked by nesting depth,
/// activities as ticks with short names (Entry, BT, BS, BW, AW, Exit), log lines as orange
/// markers. Hover text (`<title>`) gives each bar's label and kind.
///
/// ```swift
/// let svg = TurnTimelineChart.svg(recorder.entries, title: "seed-code1-source0")
/// ```
public enum TurnTimelineChart {
    static let kindColors: [(LoopEvent.Callout, String)] = [
        (.observer, "#b4a7d6"), (.block, "#f6b26b"), (.source0, "#6fa8dc"), (.source1, "#93c47d"),
        (.fileSource, "#76a5af"), (.timer, "#e06666"), (.mainQueue, "#ffd966"),
    ]

    static func color(_ kind: LoopEvent.Callout) -> String {
        kindColors.first { $0.0 == kind }?.1 ?? "#cccccc"
    }

    private struct Bar { var start: Double; var end: Double; var depth: Int; var kind: LoopEvent.Callout; var label: String }
    private enum TickKind { case activity, log, lag }
    private struct Tick { var at: Double; var text: String; var kind: TickKind }

    /// - Parameters:
    ///   - hidesObservers: leave observer callouts out (they can crowd the rows).
    ///   - maxTurns: rows drawn at most (the first turns); a note says how many were left out.
    public static func svg(_ entries: [TraceEntry], title: String = "Turns", xAxis: ChartXAxis = .automatic,
                           thread: Int? = nil, hidesObservers: Bool = false, maxTurns: Int = 40,
                           width: Int = 1000) -> String {
        let allTurns = TraceTurn.split(entries, thread: thread)
        let turns = Array(allTurns.prefix(max(1, maxTurns)))
        let axis: ChartXAxis = xAxis == .automatic ? ((turns.map(\.duration).max() ?? 0) > 0 ? .time : .order) : xAxis

        // Lay out every turn in its own units (slots or nanoseconds from the turn start).
        var layouts: [(turn: TraceTurn, bars: [Bar], ticks: [Tick], extent: Double, depth: Int)] = []
        for turn in turns {
            var bars: [Bar] = []
            var ticks: [Tick] = []
            var stack: [Bar] = []
            var slot = 0.0
            var maxDepth = 0
            for entry in turn.entries {
                let position = axis == .order ? slot : Double(entry.time.nanoseconds &- turn.start.nanoseconds)
                switch entry.kind {
                case .activity(let activity):
                    ticks.append(Tick(at: position, text: ActivityNames.shortName(activity), kind: .activity))
                    slot += 1
                case .log:
                    ticks.append(Tick(at: position, text: entry.label, kind: .log))
                    slot += 1
                case .lag(let report):
                    ticks.append(Tick(at: position, text: "lag \(TextLogExporter.formatMilliseconds(report.spanNanoseconds)) ms",
                                      kind: .lag))
                    slot += 1
                case .calloutBegin(let kind):
                    if hidesObservers && kind == .observer { stack.append(Bar(start: -1, end: -1, depth: -1, kind: kind, label: "")); continue }
                    let depth = stack.filter { $0.depth >= 0 }.count
                    maxDepth = max(maxDepth, depth + 1)
                    stack.append(Bar(start: position, end: position, depth: depth, kind: kind, label: entry.label))
                    slot += 1
                case .calloutEnd:
                    guard var bar = stack.popLast() else { continue }
                    if bar.depth < 0 { continue }
                    bar.end = axis == .order ? slot : position
                    bars.append(bar)
                default:
                    break
                }
            }
            let lastPosition = axis == .order ? slot : Double(turn.duration)
            for var bar in stack.reversed() where bar.depth >= 0 {   // still running at the end of the trace
                bar.end = lastPosition
                bars.append(bar)
            }
            layouts.append((turn, bars, ticks, max(lastPosition, 1), max(maxDepth, 1)))
        }

        let labelWidth = 150.0, right = 64.0, headerHeight = 96.0
        let plotWidth = Double(width) - labelWidth - right
        let extent = layouts.map(\.extent).max() ?? 1
        let scale = plotWidth / extent
        let laneHeight = 16.0, tickBand = 30.0, rowGap = 10.0
        let rowHeights = layouts.map { tickBand + Double($0.depth) * laneHeight + rowGap }
        let footer = allTurns.count > turns.count ? 40.0 : 26.0
        let height = Int(headerHeight + rowHeights.reduce(0, +) + footer)

        var svg = SVGDocument(width: width, height: height)
        svg.rect(x: 0, y: 0, width: Double(width), height: Double(height), fill: "#ffffff")
        svg.text(title, x: 16, y: 24, size: 16, weight: "bold")
        let unit = axis == .order ? "x: order of events within the turn" : "x: time since the turn woke up (ms)"
        svg.text("one row per turn (wake-up → sleep); \(unit)", x: 16, y: 42, size: 11, fill: "#555")

        // Legend.
        var legendX = 16.0
        for (kind, color) in kindColors where !(hidesObservers && kind == .observer) {
            svg.rect(x: legendX, y: 52, width: 14, height: 10, fill: color, stroke: "#666")
            svg.text("\(kind)", x: legendX + 18, y: 61, size: 11, fill: "#333")
            legendX += 18 + Double("\(kind)".count) * 6.6 + 14
        }
        svg.line(x1: legendX, y1: 50, x2: legendX, y2: 64, stroke: "#e69138", width: 2)
        svg.text("log line", x: legendX + 5, y: 61, size: 11, fill: "#333")
        legendX += 60
        svg.line(x1: legendX, y1: 50, x2: legendX, y2: 64, stroke: "#cc0000", width: 2)
        svg.text("lag report", x: legendX + 5, y: 61, size: 11, fill: "#333")

        // Time axis ticks along the top of the rows.
        if axis == .time {
            let ticks = AxisTicks.ticks(upTo: extent / 1e6, count: 8)
            for tick in ticks where tick * 1e6 <= extent * 1.0001 {
                let x = labelWidth + tick * 1e6 * scale
                svg.line(x1: x, y1: headerHeight - 4, x2: x, y2: headerHeight + rowHeights.reduce(0, +), stroke: "#f0f0f0")
                svg.text(MemoryChart.label(tick), x: x, y: headerHeight - 6, size: 10, anchor: "middle", fill: "#777")
            }
        }

        var y = headerHeight
        for (index, layout) in layouts.enumerated() {
            let rowHeight = rowHeights[index]
            if index % 2 == 1 {
                svg.rect(x: 0, y: y - 2, width: Double(width), height: rowHeight, fill: "#f7f9fc")
            }
            let turn = layout.turn
            svg.text("turn \(turn.number)", x: 12, y: y + 14, size: 12, weight: "bold")
            let passes = turn.passes.lowerBound == turn.passes.upperBound
                ? "pass \(turn.passes.lowerBound)" : "passes \(turn.passes.lowerBound)–\(turn.passes.upperBound)"
            svg.text("\(passes) · \(TextLogExporter.formatMilliseconds(turn.duration)) ms", x: 12, y: y + 29, size: 10, fill: "#666")

            let slotWidth = axis == .order ? scale : 0
            // Log and lag labels on the first line, activity names on the second; a label that
            // would overlap the previous one on its line is left out (its marker keeps a tooltip).
            var logLabelsEnd = -Double.infinity
            var activityLabelsEnd = -Double.infinity
            for tick in layout.ticks {
                let x = labelWidth + tick.at * scale + slotWidth / 2
                switch tick.kind {
                case .log, .lag:
                    let color = tick.kind == .lag ? "#cc0000" : "#e69138"
                    svg.line(x1: x, y1: y + 2, x2: x, y2: y + rowHeight - rowGap, stroke: color, width: 2, title: tick.text)
                    let text = String(tick.text.prefix(axis == .order ? max(3, Int(max(slotWidth * 2, 40) / 5.5)) : 24))
                    let textWidth = Double(text.count) * 5.2
                    let fitsRight = x + 3 + textWidth <= Double(width) - 4     // else write it leftwards
                    let textStart = fitsRight ? x + 3 : x - 3 - textWidth
                    if textStart > logLabelsEnd + 2 {
                        svg.text(text, x: fitsRight ? x + 3 : x - 3, y: y + 10, size: 9, anchor: fitsRight ? "start" : "end",
                                 fill: tick.kind == .lag ? "#cc0000" : "#b45f06")
                        logLabelsEnd = textStart + textWidth
                    }
                case .activity:
                    svg.line(x1: x, y1: y + 26, x2: x, y2: y + rowHeight - rowGap, stroke: "#bbbbbb", dash: "2 2", title: tick.text)
                    let half = Double(tick.text.count) * 2.8
                    if x - half > activityLabelsEnd + 2 {
                        svg.text(tick.text, x: x, y: y + 24, size: 9, anchor: "middle", fill: "#444")
                        activityLabelsEnd = x + half
                    }
                }
            }
            for bar in layout.bars {
                let x = labelWidth + bar.start * scale
                let w = max(2, (bar.end - bar.start) * scale + (axis == .order ? 0 : 0))
                let barY = y + tickBand + Double(bar.depth) * laneHeight
                let detail = axis == .time ? " (\(TextLogExporter.formatMilliseconds(UInt64(bar.end - bar.start))) ms)" : ""
                svg.rect(x: x, y: barY, width: w, height: laneHeight - 3, fill: color(bar.kind), stroke: "#555",
                         title: "\(bar.kind) \(bar.label)\(detail)", extra: [("stroke-width", "0.5"), ("rx", "2")])
                let room = Int(w / 6)
                if room >= 3 {
                    let text = bar.label.count <= room ? bar.label : String(bar.label.prefix(room - 1)) + "…"
                    svg.text(text, x: x + 3, y: barY + laneHeight - 6.5, size: 10, fill: "#111")
                }
            }
            y += rowHeight
        }
        if allTurns.count > turns.count {
            svg.text("… \(allTurns.count - turns.count) more turns not shown", x: 16, y: y + 18, size: 11, fill: "#777")
        }
        if layouts.isEmpty {
            svg.text("no turns recorded", x: labelWidth, y: headerHeight + 20, size: 13, fill: "#999")
        }
        return svg.render()
    }
}

extension TraceRecorder {
    /// The per-turn callout timeline of the kept entries (see `TurnTimelineChart`).
    public func turnTimelineSVG(title: String = "Turns", xAxis: ChartXAxis = .automatic,
                                hidesObservers: Bool = false, maxTurns: Int = 40) -> String {
        TurnTimelineChart.svg(entries, title: title, xAxis: xAxis, hidesObservers: hidesObservers, maxTurns: maxTurns)
    }

    /// The memory chart of the kept entries (see `MemoryChart`).
    public func memoryChartSVG(metrics: [MemoryMetric] = [.poolPendingEntries], title: String = "Memory",
                               xAxis: ChartXAxis = .automatic) -> String {
        MemoryChart.svg(entries, metrics: metrics, title: title, xAxis: xAxis)
    }
}
