import RunLoopCore

/// How charts place events horizontally.
public enum ChartXAxis: Sendable, Equatable {
    /// By clock time.
    case time
    /// By order of occurrence (one slot per sample/event).
    case order
    /// By loop turn: each turn gets one unit of the axis and its samples are spread over it
    /// in the order they were taken — for virtual-clock runs where a whole turn happens at
    /// one instant. The turn timeline treats it as `.order` (its rows are turns already).
    case turns
    /// `.time` when time advances between the plotted items; otherwise `.turns` when the
    /// items span more than one turn, `.order` when they do not.
    case automatic
}

/// SVG chart of memory samples with the turn ends (the loop going to sleep, after BeforeWaiting
/// and its pool pop) as dashed lines, so every line comes after the last sample of its turn.
/// The x axis runs from the first sample to the last one.
///
/// ```swift
/// let svg = MemoryChart.svg(recorder.entries, metrics: [.poolPendingEntries], title: "Autorelease sawtooth")
/// ```
public enum MemoryChart {
    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]

    /// Where a turn ended: its clock time and how many samples were taken up to then.
    struct TurnEnd: Equatable {
        var time: LoopInstant
        var samplesBefore: Int
    }

    /// Builds the chart from a trace holding `.memory` entries (a `MemoryProbe` with a
    /// recorder). A turn ends where `TraceTurn.split` ends one: when the loop goes to sleep
    /// (after the BeforeWaiting observers, pool pop included) or its outermost run returns, so
    /// the turn numbers match the turn timeline's.
    /// Metrics plotted together share one y axis, so pick metrics with the same unit.
    public static func svg(_ entries: [TraceEntry], metrics: [MemoryMetric] = [.poolPendingEntries],
                           title: String = "Memory", xAxis: ChartXAxis = .automatic,
                           thread: Int? = nil, width: Int = 900, height: Int = 420) -> String {
        let lane = thread ?? entries.first { if case .activity = $0.kind { true } else { false } }?.thread ?? entries.first?.thread
        var samples: [MemorySample] = []
        var turnEnds: [TurnEnd] = []
        var turnHasEntries = false
        var runDepth = 0
        for entry in entries {
            if case .memory(let sample) = entry.kind, thread == nil || entry.thread == thread { samples.append(sample) }
            guard entry.thread == lane else { continue }
            turnHasEntries = true
            var ends = false
            switch entry.kind {
            case .runBegin: runDepth += 1
            case .runEnd:
                runDepth = max(0, runDepth - 1)
                ends = runDepth == 0
            case .sleep: ends = true
            default: break
            }
            if ends && turnHasEntries {
                turnEnds.append(TurnEnd(time: entry.time, samplesBefore: samples.count))
                turnHasEntries = false
            }
        }
        return render(samples: samples, turnEnds: turnEnds, metrics: metrics, title: title, xAxis: xAxis,
                      width: width, height: height)
    }

    /// Builds the chart from samples and turn-end times directly (a sample taken at a turn
    /// end's instant counts as part of that turn).
    public static func svg(samples: [MemorySample], boundaries: [LoopInstant], metrics: [MemoryMetric] = [.poolPendingEntries],
                           title: String = "Memory", xAxis: ChartXAxis = .automatic,
                           width: Int = 900, height: Int = 420) -> String {
        let ends = boundaries.map { time in TurnEnd(time: time, samplesBefore: samples.firstIndex { $0.time > time } ?? samples.count) }
        return render(samples: samples, turnEnds: ends, metrics: metrics, title: title, xAxis: xAxis,
                      width: width, height: height)
    }

    static func resolvedAxis(_ axis: ChartXAxis, times: [LoopInstant], turnCount: Int) -> ChartXAxis {
        guard axis == .automatic else { return axis }
        var increasing = times.count > 1
        for (a, b) in zip(times, times.dropFirst()) where b <= a { increasing = false }
        if increasing { return .time }
        return turnCount > 1 ? .turns : .order
    }

    /// The x of every sample, the x of every turn end and the axis range, in the axis' unit
    /// (ms since the first sample, turns, or sample numbers).
    struct Placement {
        var xs: [Double] = []
        var ends: [(x: Double, turn: Int)] = []
        var range: ClosedRange<Double> = 0...1
        /// Turn number of every sample (1 = the first turn of the trace).
        var turns: [Int] = []
    }

    static func place(samples: [MemorySample], turnEnds: [TurnEnd], axis: ChartXAxis) -> Placement {
        var placement = Placement()
        // Turn of each sample: one more than the turn ends recorded before it.
        var endIndex = 0
        for index in samples.indices {
            while endIndex < turnEnds.count && turnEnds[endIndex].samplesBefore <= index { endIndex += 1 }
            placement.turns.append(endIndex + 1)
        }
        switch axis {
        case .time:
            let origin = samples.first?.time ?? .zero
            placement.xs = samples.map { Double(ChartText.span(from: origin, to: $0.time)) / 1e6 }
            // A turn ends after its last sample even if the clock read a little earlier at the sleep.
            let xs = placement.xs
            placement.ends = turnEnds.enumerated().filter { $0.element.time >= origin }.map { index, end in
                let atSleep = Double(ChartText.span(from: origin, to: end.time)) / 1e6
                return (end.samplesBefore > 0 ? max(atSleep, xs[end.samplesBefore - 1]) : atSleep, index + 1)
            }
        case .turns:
            // Turn k spans [k - 1, k]; its m samples sit at (k - 1) + j / (m + 1), j = 1…m.
            var counts: [Int: Int] = [:]
            for turn in placement.turns { counts[turn, default: 0] += 1 }
            var seen: [Int: Int] = [:]
            for turn in placement.turns {
                seen[turn, default: 0] += 1
                placement.xs.append(Double(turn - 1) + Double(seen[turn]!) / Double(counts[turn]! + 1))
            }
            placement.ends = turnEnds.indices.map { (Double($0 + 1), $0 + 1) }
        case .order, .automatic:
            placement.xs = samples.indices.map(Double.init)
            placement.ends = turnEnds.enumerated().map { (Double($0.element.samplesBefore) - 0.5, $0.offset + 1) }
        }
        let first = axis == .turns ? Double((placement.turns.first ?? 1) - 1) : (placement.xs.first ?? 0)
        let last = placement.xs.last ?? 1
        placement.range = first...max(last, first + (axis == .time ? 1e-3 : 1))
        // A turn end past the last sample (or before the first) is outside the chart.
        placement.ends = placement.ends.filter { placement.range.contains($0.x) && $0.x > (placement.xs.first ?? 0) }
        return placement
    }

    static func render(samples: [MemorySample], turnEnds: [TurnEnd],
                       metrics: [MemoryMetric], title: String, xAxis: ChartXAxis, width: Int, height: Int) -> String {
        var svg = SVGDocument(width: width, height: height)
        let left = 90.0, right = 30.0, top = 56.0, bottom = 62.0
        let plotWidth = Double(width) - left - right
        let plotHeight = Double(height) - top - bottom
        svg.rect(x: 0, y: 0, width: Double(width), height: Double(height), fill: "#ffffff")
        svg.text(title, x: left, y: 24, size: 16, weight: "bold")

        let turnCount = 1 + turnEnds.filter { $0.samplesBefore > 0 && $0.samplesBefore < samples.count }.count
        let axis = resolvedAxis(xAxis, times: samples.map(\.time), turnCount: turnCount)
        let placement = place(samples: samples, turnEnds: turnEnds, axis: axis)
        let xs = placement.xs
        let xRange = placement.range

        let values = metrics.map { metric in samples.map { metric.value(of: $0) } }
        let isBytes = metrics.contains { $0.isBytes }
        let yMaxRaw = values.flatMap { $0 }.max() ?? 0
        let yDivisor = isBytes ? (yMaxRaw >= 4 * 1_048_576 ? 1_048_576.0 : 1_024.0) : 1
        let yUnit = isBytes ? (yDivisor == 1_048_576 ? "MiB" : "KiB") : countUnit(metrics)
        let yTicks = AxisTicks.ticks(upTo: yMaxRaw / yDivisor)
        let yMax = yTicks.last!

        func px(_ x: Double) -> Double { left + (x - xRange.lowerBound) / (xRange.upperBound - xRange.lowerBound) * plotWidth }
        func py(_ y: Double) -> Double { top + plotHeight - (y / yDivisor) / yMax * plotHeight }

        // Grid and axes.
        for tick in yTicks {
            let y = top + plotHeight - tick / yMax * plotHeight
            svg.line(x1: left, y1: y, x2: left + plotWidth, y2: y, stroke: "#e6e6e6")
            svg.text(label(tick), x: left - 8, y: y + 4, size: 11, anchor: "end", fill: "#555")
        }
        for (x, text) in xTicks(axis: axis, placement: placement) {
            svg.line(x1: px(x), y1: top + plotHeight, x2: px(x), y2: top + plotHeight + 5, stroke: "#555")
            svg.text(text, x: px(x), y: top + plotHeight + 19, size: 11, anchor: "middle", fill: "#555")
        }
        svg.line(x1: left, y1: top, x2: left, y2: top + plotHeight, stroke: "#333")
        svg.line(x1: left, y1: top + plotHeight, x2: left + plotWidth, y2: top + plotHeight, stroke: "#333")
        let xTitle = switch axis {
        case .time: "time since the first sample (ms)"
        case .turns: "loop turn (each turn's samples in the order taken)"
        default: "sample number (in the order taken)"
        }
        svg.text(xTitle, x: left + plotWidth / 2, y: Double(height) - 16, size: 12, anchor: "middle", fill: "#333")
        svg.text(metrics.count == 1 ? (isBytes ? "\(metrics[0].title) (\(yUnit))" : metrics[0].title) : yUnit, x: 22, y: top + plotHeight / 2, size: 12,
                 anchor: "middle", fill: "#333", rotate: -90)

        // Turn ends.
        for end in placement.ends {
            let x = px(end.x)
            svg.line(x1: x, y1: top, x2: x, y2: top + plotHeight, stroke: "#999", dash: "4 3",
                     title: "end of turn \(end.turn) (the loop goes to sleep)")
        }

        // Series.
        for (index, metric) in metrics.enumerated() {
            let color = palette[index % palette.count]
            let points = zip(xs, values[index]).map { (px($0), py($1)) }
            if points.count > 1 { svg.polyline(points, stroke: color) }
            if points.count <= 120 {
                for (offset, point) in points.enumerated() {
                    let sample = samples[offset]
                    svg.circle(x: point.0, y: point.1, radius: 3, fill: color,
                               title: "turn \(placement.turns[offset]), \(sample.label): \(metric.title) = \(label(metric.value(of: sample)))")
                }
            }
        }

        // Legend.
        var legendX = left + plotWidth
        let entries = metrics.enumerated().map { ($0.element.title, palette[$0.offset % palette.count], false) }
            + (placement.ends.isEmpty ? [] : [("turn end (loop sleeps)", "#999", true)])
        for (name, color, dashed) in entries.reversed() {
            legendX -= ChartText.width(name, size: 12) + 34
            svg.line(x1: legendX, y1: 40, x2: legendX + 22, y2: 40, stroke: color, width: dashed ? 1.5 : 3,
                     dash: dashed ? "4 3" : nil)
            svg.text(name, x: legendX + 27, y: 44, size: 12, fill: "#333")
        }
        if samples.isEmpty {
            svg.text("no samples", x: left + plotWidth / 2, y: top + plotHeight / 2, size: 14, anchor: "middle", fill: "#999")
        }
        return svg.render()
    }

    /// Tick positions and texts inside the x range: round values of time or sample number,
    /// or one tick per turn (centred on its unit, thinned to about 12).
    static func xTicks(axis: ChartXAxis, placement: Placement) -> [(Double, String)] {
        let range = placement.range
        if axis == .turns {
            let first = Int(range.lowerBound) + 1, last = placement.turns.last ?? first
            let step = max(1, Int(AxisTicks.niceStep(for: Double(last - first + 1), ticks: 12)))
            return stride(from: first, through: last, by: step)
                .map { (Double($0) - 0.5, String($0)) }
                .filter { range.contains($0.0) }
        }
        let span = range.upperBound - range.lowerBound
        let step = AxisTicks.niceStep(for: span, ticks: 8)
        var ticks: [(Double, String)] = []
        var value = (range.lowerBound / step).rounded(.up) * step
        while value <= range.upperBound + step * 1e-9 {
            ticks.append((value, label(value)))
            value += step
        }
        return ticks
    }

    /// "entries" or "pages" when every metric counts that, else "count".
    static func countUnit(_ metrics: [MemoryMetric]) -> String {
        if metrics.allSatisfy({ $0 == .poolPendingEntries || $0 == .poolPeakEntries }) { return "entries" }
        if metrics.allSatisfy({ $0 == .poolPages }) { return "pages" }
        return "count"
    }

    static func label(_ value: Double) -> String {
        value == value.rounded() ? String(Int64(value)) : TextLogExporter.formatFixed(value, decimals: value < 10 ? 2 : 1)
    }
}
