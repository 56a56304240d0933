/// A small SVG line chart of several named series over a shared x axis — for comparing two
/// runs of a scenario (the instruments' `MemoryChart` plots the samples of one run).
///
/// ```swift
/// let svg = SeriesChart.svg(title: "pool entries", xLabel: "pass", yLabel: "entries",
///                           series: [("observers", [(1, 101), (2, 201)]), ("per callout", [(1, 101), (2, 101)])])
/// ```
enum SeriesChart {
    static let colors = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd"]

    static func svg(title: String, xLabel: String, yLabel: String,
                    series: [(name: String, points: [(x: Double, y: Double)])],
                    width: Double = 900, height: Double = 420) -> String {
        let left = 80.0, right = 30.0, top = 64.0, bottom = 56.0
        let plotW = width - left - right, plotH = height - top - bottom
        let all = series.flatMap(\.points)
        let xMin = all.map(\.x).min() ?? 0
        let xMax = max(all.map(\.x).max() ?? 1, xMin + 1)
        let yTicks = niceTicks(upTo: max(all.map(\.y).max() ?? 1, 1))
        let yMax = yTicks.last!
        func px(_ x: Double) -> Double { left + (x - xMin) / (xMax - xMin) * plotW }
        func py(_ y: Double) -> Double { top + plotH - y / yMax * plotH }

        var out: [String] = []
        out.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(width))\" height=\"\(n(height))\" "
                   + "viewBox=\"0 0 \(n(width)) \(n(height))\" font-family=\"sans-serif\">")
        out.append("<rect x=\"0\" y=\"0\" width=\"\(n(width))\" height=\"\(n(height))\" fill=\"#ffffff\"/>")
        // A title too long for the chart gets a smaller font rather than running off the edge.
        let titleSize = min(16, (width - left - 10) / (Double(title.count) * 0.6))
        out.append(text(title, x: left, y: 26, size: titleSize.rounded(.down), extra: " font-weight=\"bold\""))
        for tick in yTicks {
            out.append(line(left, py(tick), left + plotW, py(tick), "#e6e6e6"))
            out.append(text(n(tick), x: left - 8, y: py(tick) + 4, size: 11, extra: " text-anchor=\"end\" fill=\"#555\""))
        }
        for tick in xTicks(from: xMin, to: xMax) {
            out.append(line(px(tick), top + plotH, px(tick), top + plotH + 5, "#555"))
            out.append(text(n(tick), x: px(tick), y: top + plotH + 19, size: 11, extra: " text-anchor=\"middle\" fill=\"#555\""))
        }
        out.append(line(left, top, left, top + plotH, "#333"))
        out.append(line(left, top + plotH, left + plotW, top + plotH, "#333"))
        out.append(text(xLabel, x: left + plotW / 2, y: height - 14, size: 12, extra: " text-anchor=\"middle\" fill=\"#333\""))
        out.append(text(yLabel, x: 20, y: top + plotH / 2, size: 12,
                        extra: " text-anchor=\"middle\" fill=\"#333\" transform=\"rotate(-90 20 \(n(top + plotH / 2)))\""))
        var legendX = left
        for (index, item) in series.enumerated() {
            let color = colors[index % colors.count]
            let points = item.points.map { "\(n(px($0.x))),\(n(py($0.y)))" }.joined(separator: " ")
            out.append("<polyline points=\"\(points)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2.5\"/>")
            out.append("<line x1=\"\(n(legendX))\" y1=\"46\" x2=\"\(n(legendX + 22))\" y2=\"46\" stroke=\"\(color)\" stroke-width=\"3\"/>")
            out.append(text(item.name, x: legendX + 28, y: 50, size: 12, extra: " fill=\"#333\""))
            // The last value, written at the line's end: what the reader looks for first.
            if let last = item.points.last {
                out.append(text(n(last.y), x: px(last.x) - 4, y: py(last.y) - 6, size: 11,
                                extra: " text-anchor=\"end\" font-weight=\"bold\" fill=\"\(color)\""))
            }
            legendX += 28 + Double(item.name.count) * 7 + 30
        }
        out.append("</svg>")
        return out.joined(separator: "\n") + "\n"
    }

    /// X ticks from the first point to the last: both ends, and the round values between
    /// them that are not too close to an end.
    static func xTicks(from xMin: Double, to xMax: Double) -> [Double] {
        let ticks = niceTicks(upTo: xMax - xMin, count: 8)
        let step = ticks.count > 1 ? ticks[1] : 1
        var out = [xMin]
        var value = ((xMin / step).rounded(.down) + 1) * step
        while value < xMax - step * 0.4 {
            if value - xMin >= step * 0.4 { out.append(value) }
            value += step
        }
        if xMax > xMin { out.append(xMax) }
        return out
    }

    /// Round tick values from 0 to at least `maximum`.
    static func niceTicks(upTo maximum: Double, count: Int = 5) -> [Double] {
        let raw = max(maximum, 1e-9) / Double(count)
        var magnitude = 1.0
        while magnitude * 10 <= raw { magnitude *= 10 }
        while magnitude > raw { magnitude /= 10 }
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? magnitude * 10
        var ticks: [Double] = []
        var value = 0.0
        while true {
            ticks.append(value)
            if value >= maximum { break }
            value += step
        }
        return ticks
    }

    private static func n(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String((value * 10).rounded() / 10)
    }

    private static func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, _ stroke: String) -> String {
        "<line x1=\"\(n(x1))\" y1=\"\(n(y1))\" x2=\"\(n(x2))\" y2=\"\(n(y2))\" stroke=\"\(stroke)\"/>"
    }

    private static func text(_ content: String, x: Double, y: Double, size: Double, extra: String) -> String {
        let escaped = content.replacingAll("&", "&amp;").replacingAll("<", "&lt;").replacingAll(">", "&gt;")
        return "<text x=\"\(n(x))\" y=\"\(n(y))\" font-size=\"\(n(size))\"\(extra)>\(escaped)</text>"
    }
}

extension String {
    /// Replaces every occurrence of `target` (no Foundation needed).
    func replacingAll(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
