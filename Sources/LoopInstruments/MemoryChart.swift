import RunLoopCore

/// How charts place events horizontally.
public enum ChartXAxis: Sendable, Equatable {
    /// By clock time.
    case time
    /// By order of occurrence (one slot per sample/event) — for virtual-clock runs where
    /// many things share one instant.
    case order
    /// `.time` when time advances between the plotted items, `.order` otherwise.
    case automatic
}

/// SVG chart of memory samples over time, with turn boundaries (BeforeWaiting) as dashed lines.
///
/// ```swift
/// let svg = MemoryChart.svg(recorder.entries, metrics: [.poolPendingEntries], title: "Autorelease sawtooth")
/// ```
public enum MemoryChart {
    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]

    /// Builds the chart from a trace holding `.memory` entries (a `MemoryProbe` with a
    /// recorder); BeforeWaiting activities become turn boundaries.
    /// Metrics plotted together share one y axis, so pick metrics with the same unit.
    public static func svg(_ entries: [TraceEntry], metrics: [MemoryMetric] = [.poolPendingEntries],
                           title: String = "Memory", xAxis: ChartXAxis = .automatic,
                           thread: Int? = nil, width: Int = 900, height: Int = 420) -> String {
        var samples: [MemorySample] = []
        var boundaryTimes: [LoopInstant] = []
        var boundarySlots: [Double] = []
        for entry in entries where thread == nil || entry.thread == thread {
            switch entry.kind {
            case .memory(let sample): samples.append(sample)
            case .activity(let activity) where activity == .beforeWaiting:
                boundaryTimes.append(entry.time)
                boundarySlots.append(Double(samples.count) - 0.5)
            default: break
            }
        }
        return render(samples: samples, boundaryTimes: boundaryTimes, boundarySlots: boundarySlots,
                      metrics: metrics, title: title, xAxis: xAxis, width: width, height: height)
    }

    /// Builds the chart from samples and boundary times directly.
    public static func svg(samples: [MemorySample], boundaries: [LoopInstant], metrics: [MemoryMetric] = [.poolPendingEntries],
                           title: String = "Memory", xAxis: ChartXAxis = .automatic,
                           width: Int = 900, height: Int = 420) -> String {
        // In order mode a boundary sits just before the first sample taken after it.
        let slots = boundaries.map { time in Double(samples.firstIndex { $0.time > time } ?? samples.count) - 0.5 }
        return render(samples: samples, boundaryTimes: boundaries, boundarySlots: slots,
                      metrics: metrics, title: title, xAxis: xAxis, width: width, height: height)
    }

    static func resolvedAxis(_ axis: ChartXAxis, times: [LoopInstant]) -> ChartXAxis {
        guard axis == .automatic else { return axis }
        for (a, b) in zip(times, times.dropFirst()) where b <= a { return .order }
        return times.count > 1 ? .time : .order
    }

    static func render(samples: [MemorySample], boundaryTimes: [LoopInstant], boundarySlots: [Double],
                       metrics: [MemoryMetric], title: String, xAxis: ChartXAxis, width: Int, height: Int) -> String {
        var svg = SVGDocument(width: width, height: height)
        let left = 90.0, right = 30.0, top = 56.0, bottom = 62.0
        let plotWidth = Double(width) - left - right
        let plotHeight = Double(height) - top - bottom
        svg.rect(x: 0, y: 0, width: Double(width), height: Double(height), fill: "#ffffff")
        svg.text(title, x: left, y: 24, size: 16, weight: "bold")

        let axis = resolvedAxis(xAxis, times: samples.map(\.time))
        let origin = samples.first?.time ?? .zero
        let xs: [Double]
        let boundaries: [Double]
        let xMax: Double
        if axis == .time {
            xs = samples.map { Double($0.time.nanoseconds &- origin.nanoseconds) / 1e6 }
            boundaries = boundaryTimes.filter { $0 >= origin }.map { Double($0.nanoseconds - origin.nanoseconds) / 1e6 }
            xMax = max(xs.max() ?? 1, boundaries.max() ?? 0, 1e-3)
        } else {
            xs = samples.indices.map(Double.init)
            boundaries = boundarySlots.filter { $0 >= -0.5 }
            xMax = max(Double(samples.count - 1), 1)
        }
        let values = metrics.map { metric in samples.map { metric.value(of: $0) } }
        let isBytes = metrics.contains { $0.isBytes }
        let yMaxRaw = values.flatMap { $0 }.max() ?? 0
        let yDivisor = isBytes ? (yMaxRaw >= 4 * 1_048_576 ? 1_048_576.0 : 1_024.0) : 1
        let yUnit = isBytes ? (yDivisor == 1_048_576 ? "MiB" : "KiB") : "count"
        let yTicks = AxisTicks.ticks(upTo: yMaxRaw / yDivisor)
        let yMax = yTicks.last!
        let xTicks = AxisTicks.ticks(upTo: xMax, count: 8)
        let xTop = xTicks.last!

        func px(_ x: Double) -> Double { left + (x + (axis == .order ? 0.5 : 0)) / (xTop + (axis == .order ? 1 : 0)) * plotWidth }
        func py(_ y: Double) -> Double { top + plotHeight - (y / yDivisor) / yMax * plotHeight }

        // Grid and axes.
        for tick in yTicks {
            let y = top + plotHeight - tick / yMax * plotHeight
            svg.line(x1: left, y1: y, x2: left + plotWidth, y2: y, stroke: "#e6e6e6")
            svg.text(label(tick), x: left - 8, y: y + 4, size: 11, anchor: "end", fill: "#555")
        }
        for tick in xTicks {
            let x = px(tick)
            svg.line(x1: x, y1: top + plotHeight, x2: x, y2: top + plotHeight + 5, stroke: "#555")
            svg.text(label(tick), x: x, y: top + plotHeight + 19, size: 11, anchor: "middle", fill: "#555")
        }
        svg.line(x1: left, y1: top, x2: left, y2: top + plotHeight, stroke: "#333")
        svg.line(x1: left, y1: top + plotHeight, x2: left + plotWidth, y2: top + plotHeight, stroke: "#333")
        svg.text(axis == .time ? "time (ms)" : "sample #", x: left + plotWidth / 2, y: Double(height) - 16,
                 size: 12, anchor: "middle", fill: "#333")
        svg.text(metrics.count == 1 ? "\(metrics[0].title) (\(yUnit))" : yUnit, x: 22, y: top + plotHeight / 2, size: 12,
                 anchor: "middle", fill: "#333", rotate: -90)

        // Turn boundaries.
        for (index, boundary) in boundaries.enumerated() {
            let x = px(boundary)
            svg.line(x1: x, y1: top, x2: x, y2: top + plotHeight, stroke: "#999", dash: "4 3",
                     title: "BeforeWaiting #\(index + 1)")
        }

        // Series.
        for (index, metric) in metrics.enumerated() {
            let color = palette[index % palette.count]
            let points = zip(xs, values[index]).map { (px($0), py($1)) }
            if points.count > 1 { svg.polyline(points, stroke: color) }
            if points.count <= 120 {
                for (point, sample) in zip(points, samples) {
                    svg.circle(x: point.0, y: point.1, radius: 3, fill: color,
                               title: "\(sample.label): \(metric.title) = \(label(metric.value(of: sample)))")
                }
            }
        }

        // Legend.
        var legendX = left + plotWidth
        let entries = metrics.enumerated().map { ($0.element.title, palette[$0.offset % palette.count], false) }
            + (boundaries.isEmpty ? [] : [("BeforeWaiting (turn end)", "#999", true)])
        for (name, color, dashed) in entries.reversed() {
            let textWidth = Double(name.count) * 7.0
            legendX -= textWidth + 44
            svg.line(x1: legendX, y1: 40, x2: legendX + 22, y2: 40, stroke: color, width: dashed ? 1.5 : 3,
                     dash: dashed ? "4 3" : nil)
            svg.text(name, x: legendX + 27, y: 44, size: 12, fill: "#333")
        }
        if samples.isEmpty {
            svg.text("no samples", x: left + plotWidth / 2, y: top + plotHeight / 2, size: 14, anchor: "middle", fill: "#999")
        }
        return svg.render()
    }

    static func label(_ value: Double) -> String {
        value == value.rounded() ? String(Int64(value)) : TextLogExporter.formatFixed(value, decimals: value < 10 ? 2 : 1)
    }
}
