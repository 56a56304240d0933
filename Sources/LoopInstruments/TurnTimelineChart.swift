import RunLoopCore

/// SVG timeline with one row per loop turn: callouts as bars stacked by nesting depth,
/// activities as ticks with short names (Entry, BT, BS, BW, AW, Exit, spelled out in the
/// header), log lines as orange markers, lag reports as red ones. A label that does not fit
/// its bar or marker is replaced by a key such as "[3]" that a legend under the rows spells
/// out, so no label is ever cut. Hover text (`<title>`) gives each bar's label and kind.
///
/// On the order axis every event gets a slot as wide as its label needs (as far as the row's
/// width allows), and where the clock moved between two events of a turn a "+20 ms" slot says
/// by how much, which is what a virtual-clock run needs: there a whole turn often happens at
/// one instant and only the sleeps (or an explicit advance) move the clock.
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

    /// Text sizes (px) of bar labels and of tick labels.
    static let barTextSize = 10.0, tickTextSize = 9.0

    /// A callout bar; `start`/`end` are slots on the order axis, nanoseconds on the time axis.
    private struct Bar { var start: Double; var end: Double; var depth: Int; var kind: LoopEvent.Callout; var label: String }
    private enum TickKind { case activity, log, lag, gap }
    /// A tick; `at` is a slot on the order axis, nanoseconds on the time axis.
    private struct Tick { var at: Double; var text: String; var kind: TickKind }

    private struct Layout {
        var turn: TraceTurn
        var bars: [Bar] = []
        var ticks: [Tick] = []
        /// Order axis: the minimum and the wanted pixel width of every slot.
        var slotMinimum: [Double] = []
        var slotWanted: [Double] = []
        /// Order axis: the left edge of every slot plus the row's end, in pixels from the plot's left.
        var slotEdges: [Double] = []
        var extent = 0.0
        var depth = 1
    }

    /// - Parameters:
    ///   - entries: the trace to draw, split into turns at each sleep.
    ///   - title: the chart's heading.
    ///   - xAxis: time within each turn, pass order, or `.automatic` (see ``ChartXAxis``).
    ///   - thread: the thread whose turns are drawn, or nil for the first one in the trace.
    ///   - width: the picture's width in pixels.
    ///   - hidesObservers: leave observer callouts out (they can crowd the rows).
    ///   - maxTurns: rows drawn at most (the first turns); a note says how many were left out.
    public static func svg(_ entries: [TraceEntry], title: String = "Turns", xAxis: ChartXAxis = .automatic,
                           thread: Int? = nil, hidesObservers: Bool = false, maxTurns: Int = 40,
                           width: Int = 1000) -> String {
        let allTurns = TraceTurn.split(entries, thread: thread)
        let turns = Array(allTurns.prefix(max(1, maxTurns)))
        let virtualLike = clockLooksVirtual(turns)
        let axis = resolvedAxis(xAxis, turns: turns, virtualLike: virtualLike)
        let origin = turns.first?.start ?? .zero

        let labelWidth = 150.0, right = 24.0, headerHeight = 112.0
        let plotWidth = Double(width) - labelWidth - right
        var layouts = turns.map { layout($0, axis: axis, virtualLike: virtualLike, hidesObservers: hidesObservers) }
        if axis == .order {
            for index in layouts.indices { allocateSlots(&layouts[index], plotWidth: plotWidth) }
        }
        let extent = max(layouts.map(\.extent).max() ?? 1, 1)
        // Time axis: nanoseconds → px. Order axis: slot edges are already in px.
        let scale = axis == .order ? 1 : plotWidth / extent

        func xOf(_ layout: Layout, _ at: Double) -> Double {
            guard axis == .order else { return labelWidth + at * scale }
            return labelWidth + layout.slotEdges[min(max(Int(at), 0), layout.slotEdges.count - 1)]
        }
        func markerX(_ layout: Layout, _ tick: Tick) -> Double {
            guard axis == .order else { return xOf(layout, tick.at) }
            // On the order axis a log marker sits near its slot's left edge, so its label fits the slot.
            if tick.kind == .log || tick.kind == .lag { return xOf(layout, tick.at) + 4 }
            return (xOf(layout, tick.at) + xOf(layout, tick.at + 1)) / 2
        }

        // Log and lag labels first (rows in order), so each row knows whether it needs a
        // second label line.
        var keys = ChartKeys()
        let logPlans = layouts.map { layout in
            planLogLabels(layout.ticks.map { ($0, markerX(layout, $0)) }, chartWidth: Double(width), keys: &keys)
        }

        let laneHeight = 16.0, rowGap = 10.0
        let tickBands = logPlans.map { plan in plan.contains { $0.line == 1 } ? 41.0 : 30.0 }
        let rowHeights = layouts.indices.map { max(tickBands[$0] + Double(layouts[$0].depth) * laneHeight + rowGap, 56) }
        let rowsHeight = rowHeights.reduce(0, +)

        var svg = SVGDocument(width: width, height: 0)
        svg.raw("<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>")   // height known at the end
        svg.text(title, x: 16, y: 24, size: 16, weight: "bold")
        let unit = axis == .order
            ? "x: order of events within the turn; a grey \"+t\" marks where the clock moved, and by how much"
            : "x: time since the turn woke up (ms)"
        svg.text("one row per turn (wake-up → sleep); \(unit)", x: 16, y: 42, size: 11, fill: "#555")
        drawLegend(&svg, hidesObservers: hidesObservers)

        if axis == .time {
            let ticks = AxisTicks.ticks(upTo: extent / 1e6, count: 8)
            for tick in ticks where tick * 1e6 <= extent * 1.0001 {
                let x = labelWidth + tick * 1e6 * scale
                svg.line(x1: x, y1: headerHeight - 4, x2: x, y2: headerHeight + rowsHeight, stroke: "#f0f0f0")
                svg.text(MemoryChart.label(tick), x: x, y: headerHeight - 6, size: 10, anchor: "middle", fill: "#777")
            }
        }

        var y = headerHeight
        for (index, layout) in layouts.enumerated() {
            let rowHeight = rowHeights[index], tickBand = tickBands[index]
            if index % 2 == 1 {
                svg.rect(x: 0, y: y - 2, width: Double(width), height: rowHeight, fill: "#f7f9fc")
            }
            drawRowHeading(&svg, layout.turn, origin: origin, y: y)
            func px(_ at: Double) -> Double { xOf(layout, at) }
            for label in logPlans[index] {
                let textColor = label.tick.kind == .lag ? "#cc0000" : "#b45f06"
                svg.text(label.text, x: label.x, y: y + 10 + Double(label.line) * 11, size: tickTextSize, anchor: label.anchor,
                         fill: textColor, weight: label.isKey ? "bold" : nil)
            }
            // Activity names and clock moves on the line above the bars; a name that would
            // overlap the one before it is left out (its tick keeps a tooltip).
            var activityLabelsEnd = -Double.infinity
            for tick in layout.ticks {
                let x = markerX(layout, tick)
                switch tick.kind {
                case .log, .lag:
                    svg.line(x1: x, y1: y + 2, x2: x, y2: y + rowHeight - rowGap, stroke: tick.kind == .lag ? "#cc0000" : "#e69138",
                             width: 2, title: tick.text)
                case .activity, .gap:
                    if tick.kind == .activity {
                        svg.line(x1: x, y1: y + tickBand - 4, x2: x, y2: y + rowHeight - rowGap, stroke: "#bbbbbb", dash: "2 2",
                                 title: activityLongName(tick.text))
                    } else {
                        svg.line(x1: px(tick.at) + 2, y1: y + tickBand - 3, x2: px(tick.at + 1) - 2, y2: y + tickBand - 3,
                                 stroke: "#999999", title: "the clock moved \(tick.text.dropFirst()) here")
                    }
                    let half = ChartText.width(tick.text, size: tickTextSize) / 2
                    if x - half > activityLabelsEnd + 2 {
                        svg.text(tick.text, x: x, y: y + tickBand - 6, size: tickTextSize, anchor: "middle",
                                 fill: tick.kind == .gap ? "#777" : "#444")
                        activityLabelsEnd = x + half
                    }
                }
            }
            // Bars left to right; a bar too narrow even for its key gets the key just after it
            // when its lane is free there.
            let bars = layout.bars.sorted { ($0.start, $0.depth) < ($1.start, $1.depth) }
            for (position, bar) in bars.enumerated() {
                let x = px(bar.start)
                let w = max(2, px(bar.end) - x)
                let barY = y + tickBand + Double(bar.depth) * laneHeight
                let textY = barY + laneHeight - 6.5
                let detail = axis == .time
                    ? " (\(ChartText.duration(UInt64(max(0, bar.end - bar.start)))))" : ""
                svg.rect(x: x, y: barY, width: w, height: laneHeight - 3, fill: color(bar.kind), stroke: "#555",
                         title: "\(bar.kind) \(bar.label)\(detail)", extra: [("stroke-width", "0.5"), ("rx", "2")])
                guard !bar.label.isEmpty else { continue }
                if ChartText.width(bar.label, size: barTextSize) + 6 <= w {
                    svg.text(bar.label, x: x + 3, y: textY, size: barTextSize, fill: "#111")
                    continue
                }
                let text = "\(bar.label) (\(bar.kind))"
                let keyWidth = ChartText.width(keys.peekKey(for: text), size: barTextSize)
                if keyWidth + 4 <= w {
                    svg.text(keys.key(for: text), x: x + 2, y: textY, size: barTextSize, fill: "#111", weight: "bold")
                } else {
                    let nextInLane = bars[(position + 1)...].first { $0.depth == bar.depth }.map { px($0.start) } ?? Double(width)
                    if x + w + 3 + keyWidth < min(nextInLane, Double(width) - 4) {
                        svg.text(keys.key(for: text), x: x + w + 3, y: textY, size: barTextSize, fill: "#111", weight: "bold")
                    }
                }
            }
            y += rowHeight
        }
        if allTurns.count > turns.count {
            svg.text("… \(allTurns.count - turns.count) more turns not shown", x: 16, y: y + 18, size: 11, fill: "#777")
            y += 24
        }
        if layouts.isEmpty {
            svg.text("no turns recorded", x: labelWidth, y: headerHeight + 20, size: 13, fill: "#999")
            y += 30
        }
        keys.draw(in: &svg, top: y + 6, left: 16, width: Double(width))
        let height = y + 6 + keys.height(width: Double(width), left: 16, size: 10) + 12
        svg.height = Int(height.rounded(.up))
        return svg.render()
    }

    /// `.automatic` becomes `.time` on a clock that moves between most events (a real clock)
    /// and `.order` on one where most events share an instant (a virtual clock) or time never
    /// moved; `.turns` means `.order` here (each row is one turn already).
    static func resolvedAxis(_ axis: ChartXAxis, turns: [TraceTurn], virtualLike: Bool) -> ChartXAxis {
        switch axis {
        case .time, .order: return axis
        case .turns: return .order
        case .automatic:
            return virtualLike || (turns.map(\.durationNanoseconds).max() ?? 0) == 0 ? .order : .time
        }
    }

    /// True when at least half the consecutive entries of the turns carry the same time.
    static func clockLooksVirtual(_ turns: [TraceTurn]) -> Bool {
        var pairs = 0, equal = 0
        for turn in turns {
            for (a, b) in zip(turn.entries, turn.entries.dropFirst()) {
                pairs += 1
                if a.time == b.time { equal += 1 }
            }
        }
        return pairs > 0 && equal * 2 >= pairs
    }

    /// Bars and ticks of one turn: slots on the order axis, nanoseconds from the turn's
    /// start on the time axis.
    private static func layout(_ turn: TraceTurn, axis: ChartXAxis, virtualLike: Bool, hidesObservers: Bool) -> Layout {
        var layout = Layout(turn: turn)
        var stack: [Bar] = []
        var maxDepth = 0
        var previousTime = turn.start
        func slot(minimum: Double, wanted: Double) -> Double {
            layout.slotMinimum.append(minimum)
            layout.slotWanted.append(max(minimum, wanted))
            return Double(layout.slotMinimum.count - 1)
        }
        func position() -> Double { Double(layout.slotMinimum.count) }
        for entry in turn.entries {
            let at = axis == .order ? position() : Double(ChartText.span(from: turn.start, to: entry.time))
            // The clock moved since the previous event: on the order axis a slot says by how much.
            let moved = ChartText.span(from: previousTime, to: entry.time)
            previousTime = max(previousTime, entry.time)
            if axis == .order && moved > 0 && (virtualLike || moved >= 1_000_000) {
                let text = "+" + ChartText.duration(moved)
                let width = ChartText.width(text, size: tickTextSize) + 10
                layout.ticks.append(Tick(at: slot(minimum: width, wanted: width), text: text, kind: .gap))
            }
            switch entry.kind {
            case .activity(let activity):
                let text = ActivityNames.shortName(activity)
                let width = max(24, ChartText.width(text, size: tickTextSize) + 8)
                layout.ticks.append(Tick(at: axis == .order ? slot(minimum: width, wanted: width) : at, text: text, kind: .activity))
            case .log, .lag:
                var text = entry.label
                var kind = TickKind.log
                if case .lag(let report) = entry.kind {
                    text = "lag \(ChartText.duration(report.spanNanoseconds))"
                    kind = .lag
                }
                let wanted = ChartText.width(text, size: tickTextSize) + 10
                layout.ticks.append(Tick(at: axis == .order ? slot(minimum: 14, wanted: wanted) : at, text: text, kind: kind))
            case .calloutBegin(let kind):
                if hidesObservers && kind == .observer { stack.append(Bar(start: -1, end: -1, depth: -1, kind: kind, label: "")); continue }
                let depth = stack.filter { $0.depth >= 0 }.count
                maxDepth = max(maxDepth, depth + 1)
                let start = axis == .order
                    ? slot(minimum: ChartText.width("[99]", size: barTextSize) + 8,
                           wanted: ChartText.width(entry.label, size: barTextSize) + 10)
                    : at
                stack.append(Bar(start: start, end: start, depth: depth, kind: kind, label: entry.label))
            case .calloutEnd:
                guard var bar = stack.popLast() else { continue }
                if bar.depth < 0 { continue }
                bar.end = axis == .order ? position() : at
                layout.bars.append(bar)
            default:
                break
            }
        }
        let lastPosition = axis == .order ? position() : Double(turn.durationNanoseconds)
        for var bar in stack.reversed() where bar.depth >= 0 {   // still running at the end of the trace
            bar.end = lastPosition
            layout.bars.append(bar)
        }
        layout.extent = max(lastPosition, 1)
        layout.depth = max(maxDepth, 1)
        return layout
    }

    /// Order axis: every slot gets its minimum width, then the slots whose labels need the
    /// least extra room get their full width while the row has room; a row whose minimums
    /// do not fit is squeezed evenly.
    private static func allocateSlots(_ layout: inout Layout, plotWidth: Double) {
        var widths = layout.slotMinimum
        let minimum = widths.reduce(0, +)
        if minimum > plotWidth {
            let squeeze = plotWidth / minimum
            widths = widths.map { $0 * squeeze }
        } else {
            var room = plotWidth - minimum
            let candidates = widths.indices.filter { layout.slotWanted[$0] > widths[$0] }
                .sorted { layout.slotWanted[$0] - widths[$0] < layout.slotWanted[$1] - widths[$1] }
            for index in candidates {
                let extra = layout.slotWanted[index] - widths[index]
                if extra <= room {
                    widths[index] += extra
                    room -= extra
                }
            }
        }
        var edges: [Double] = [0]
        for width in widths { edges.append(edges.last! + width) }
        layout.slotEdges = edges
        layout.extent = max(edges.last!, 1)
    }

    /// A log or lag label as drawn: its text (or key), anchor point and line (0 or 1).
    private struct LogLabel { var tick: Tick; var text: String; var x: Double; var anchor: String; var line: Int; var isKey: Bool }

    /// Places the log and lag labels of one row: in full on the first line where it does not
    /// overlap the label before it, else as a key (first line, then second); a label with no
    /// room even for its key keeps only its marker's tooltip. Keys enter the legend only when drawn.
    private static func planLogLabels(_ ticks: [(Tick, Double)], chartWidth: Double, keys: inout ChartKeys) -> [LogLabel] {
        var ends = [-Double.infinity, -Double.infinity]
        var out: [LogLabel] = []
        for (tick, x) in ticks where tick.kind == .log || tick.kind == .lag {
            var placedLabel: LogLabel?
            for (text, isKey) in [(tick.text, false), (keys.peekKey(for: tick.text), true)] where placedLabel == nil {
                for line in 0..<2 where placedLabel == nil {
                    if let placed = placeTickLabel(text, at: x, after: ends[line], chartWidth: chartWidth) {
                        placedLabel = LogLabel(tick: tick, text: isKey ? keys.key(for: tick.text) : text, x: placed.anchorX,
                                               anchor: placed.anchor, line: line, isKey: isKey)
                        ends[line] = placed.end
                    }
                }
            }
            if let placedLabel { out.append(placedLabel) }
        }
        return out
    }

    /// Where a log label starting at a marker fits: to its right, else to its left; nil when
    /// both would overlap the previous label or leave the chart.
    private static func placeTickLabel(_ text: String, at x: Double, after previousEnd: Double,
                                       chartWidth: Double) -> (anchorX: Double, anchor: String, end: Double)? {
        let textWidth = ChartText.width(text, size: tickTextSize)
        if x + 3 > previousEnd + 2 && x + 3 + textWidth <= chartWidth - 4 {
            return (x + 3, "start", x + 3 + textWidth)
        }
        if x - 3 - textWidth > previousEnd + 2 && x - 3 - textWidth >= 4 {
            return (x - 3, "end", x - 3)
        }
        return nil
    }

    /// "turn 2", when it woke (clock time since the first turn), its passes and how long it was awake: clock time when the clock moved, the
    /// pass count when it did not (a virtual clock stands still within most turns).
    private static func drawRowHeading(_ svg: inout SVGDocument, _ turn: TraceTurn, origin: LoopInstant, y: Double) {
        svg.text("turn \(turn.number)", x: 12, y: y + 14, size: 12, weight: "bold")
        let since = ChartText.span(from: origin, to: turn.start)
        svg.text("at \(since == 0 ? "0 ms" : ChartText.duration(since))", x: 140, y: y + 14, size: 10, anchor: "end", fill: "#666")
        let passCount = turn.passes.upperBound - turn.passes.lowerBound + 1
        let passes = passCount == 1
            ? "1 pass (#\(turn.passes.lowerBound))"
            : "\(passCount) passes (#\(turn.passes.lowerBound)–\(turn.passes.upperBound))"
        svg.text(passes, x: 12, y: y + 28, size: 10, fill: "#666")
        svg.text(turn.durationNanoseconds > 0 ? "awake \(ChartText.duration(turn.durationNanoseconds))" : "clock did not move",
                 x: 12, y: y + 41, size: 10, fill: "#666")
    }

    /// Callout colours, the two marker kinds and the activity abbreviations.
    private static func drawLegend(_ svg: inout SVGDocument, hidesObservers: Bool) {
        var legendX = 16.0
        for (kind, color) in kindColors where !(hidesObservers && kind == .observer) {
            svg.rect(x: legendX, y: 52, width: 14, height: 10, fill: color, stroke: "#666")
            svg.text("\(kind)", x: legendX + 18, y: 61, size: 11, fill: "#333")
            legendX += 18 + ChartText.width("\(kind)", size: 11) + 14
        }
        svg.line(x1: legendX, y1: 50, x2: legendX, y2: 64, stroke: "#e69138", width: 2)
        svg.text("log line", x: legendX + 5, y: 61, size: 11, fill: "#333")
        legendX += 5 + ChartText.width("log line", size: 11) + 14
        svg.line(x1: legendX, y1: 50, x2: legendX, y2: 64, stroke: "#cc0000", width: 2)
        svg.text("lag report", x: legendX + 5, y: 61, size: 11, fill: "#333")
        svg.text("activities: Entry · BT BeforeTimers · BS BeforeSources · BW BeforeWaiting · AW AfterWaiting · Exit",
                 x: 16, y: 80, size: 11, fill: "#333")
    }
}

extension TurnTimelineChart {
    /// The CF name for a short activity name (tooltips), or the text itself.
    static func activityLongName(_ short: String) -> String {
        switch short {
        case "Entry": "kCFRunLoopEntry"
        case "BT": "kCFRunLoopBeforeTimers"
        case "BS": "kCFRunLoopBeforeSources"
        case "BW": "kCFRunLoopBeforeWaiting"
        case "AW": "kCFRunLoopAfterWaiting"
        case "Exit": "kCFRunLoopExit"
        default: short
        }
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
