import LoopInstruments

/// An SVG chart of memory by callout, to put beside `TurnTimelineChart`: one column per turn,
/// stacked by site (kind and label) with the bytes its callouts allocated in that turn, and a
/// black tick at the turn's peak (the most bytes live at once above the turn's start). The
/// sites allocating most get their own colour; the rest are "other".
///
/// ```swift
/// let svg = MemoryByCalloutChart.svg(callouts: attributor.callouts, turns: attributor.turns)
/// ```
public enum MemoryByCalloutChart {
    static let palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7"]

    /// - Parameters:
    ///   - callouts: the records; only those run directly by the loop (depth 0) are stacked, so
    ///     nested layout and display spans are not counted twice.
    ///   - turns: the turns the columns stand for.
    ///   - title: the heading drawn above the chart.
    ///   - colouredSites: how many sites get a colour of their own.
    public static func svg(callouts: [CalloutAllocation], turns: [TurnAllocation], title: String = "Memory by callout",
                           colouredSites: Int = 6) -> String {
        var totals: [AllocationSite: UInt64] = [:]
        for callout in callouts where callout.depth == 0 { totals[callout.site, default: 0] += callout.user.bytes }
        let ranked = totals.filter { $0.value > 0 }.sorted { ($0.value, $1.key.description) > ($1.value, $0.key.description) }
        let coloured = Array(ranked.prefix(min(colouredSites, palette.count)).map(\.key))
        let hasOther = ranked.count > coloured.count
        func colour(_ site: AllocationSite) -> String {
            coloured.firstIndex(of: site).map { palette[$0] } ?? "#bab0ac"
        }

        // Per turn: the stack (coloured sites in rank order, then other) and the peak.
        var stacks: [[(AllocationSite?, UInt64)]] = []
        var highest: UInt64 = 1
        for turn in turns {
            var bySite: [AllocationSite: UInt64] = [:]
            var other: UInt64 = 0
            for index in turn.callouts where index < callouts.count && callouts[index].depth == 0 {
                let callout = callouts[index]
                if coloured.contains(callout.site) { bySite[callout.site, default: 0] += callout.user.bytes } else { other += callout.user.bytes }
            }
            var stack: [(AllocationSite?, UInt64)] = coloured.compactMap { site in bySite[site].map { (site, $0) } }
            if other > 0 { stack.append((nil, other)) }
            stacks.append(stack)
            highest = max(highest, stack.reduce(0) { $0 + $1.1 }, UInt64(max(0, turn.user.peak)))
        }

        let legendWidth = 260.0
        let width = 900.0, height = 420.0
        let left = 80.0, top = 40.0, bottom = 50.0
        let plotWidth = width - left - legendWidth - 20, plotHeight = height - top - bottom
        var svg = SVGDocument(width: Int(width), height: Int(height))
        svg.rect(x: 0, y: 0, width: width, height: height, fill: "#ffffff")
        svg.text(title, x: left, y: 24, size: 16, weight: "bold")
        let ticks = AxisTicks.ticks(upTo: Double(highest))
        let yMax = max(Double(highest), ticks.last ?? 1)
        func py(_ value: Double) -> Double { top + plotHeight - value / yMax * plotHeight }
        for tick in ticks {
            svg.line(x1: left, y1: py(tick), x2: left + plotWidth, y2: py(tick), stroke: "#e0e0e0")
            svg.text(byteLabel(tick), x: left - 6, y: py(tick) + 4, size: 10, anchor: "end", fill: "#555")
        }
        svg.line(x1: left, y1: py(0), x2: left + plotWidth, y2: py(0), stroke: "#333")
        svg.text("bytes allocated per turn (stacked by callout); tick: turn peak", x: left, y: height - 12, size: 11, fill: "#555")

        let slot = plotWidth / Double(max(1, turns.count))
        let barWidth = max(1, min(40, slot * 0.7))
        for (index, turn) in turns.enumerated() {
            let x = left + slot * Double(index) + (slot - barWidth) / 2
            var base = 0.0
            for (site, bytes) in stacks[index] {
                let name = site?.description ?? "other"
                svg.rect(x: x, y: py(base + Double(bytes)), width: barWidth, height: py(base) - py(base + Double(bytes)),
                         fill: site.map(colour) ?? "#bab0ac", title: "turn \(turn.number): \(name) allocated \(bytes) B")
                base += Double(bytes)
            }
            if turn.user.peak > 0 {
                let y = py(Double(turn.user.peak))
                svg.line(x1: x - 3, y1: y, x2: x + barWidth + 3, y2: y, stroke: "#000", width: 2,
                         title: "turn \(turn.number): peak \(turn.user.peak) B above its start")
            }
            if turns.count <= 30 || index % max(1, turns.count / 15) == 0 {
                svg.text(String(turn.number), x: x + barWidth / 2, y: py(0) + 14, size: 10, anchor: "middle", fill: "#555")
            }
        }
        svg.text("turn", x: left + plotWidth / 2, y: py(0) + 28, size: 11, anchor: "middle", fill: "#555")

        // Legend: one swatch per coloured site, then other and the peak tick.
        var y = top + 4
        let legendX = left + plotWidth + 20
        for site in coloured {
            svg.rect(x: legendX, y: y, width: 12, height: 12, fill: colour(site))
            svg.text(shortened(site.description, to: 34), x: legendX + 18, y: y + 10, size: 11)
            y += 18
        }
        if hasOther {
            svg.rect(x: legendX, y: y, width: 12, height: 12, fill: "#bab0ac")
            svg.text("other callouts", x: legendX + 18, y: y + 10, size: 11)
            y += 18
        }
        svg.line(x1: legendX, y1: y + 6, x2: legendX + 12, y2: y + 6, stroke: "#000", width: 2)
        svg.text("turn peak", x: legendX + 18, y: y + 10, size: 11)
        if ranked.isEmpty {
            svg.text("no allocation in any callout", x: left + plotWidth / 2, y: top + plotHeight / 2, size: 13, anchor: "middle", fill: "#777")
        }
        return svg.render()
    }

    /// Decimal units, so the axis's 1-2-5 steps read as round numbers (50 kB, not 48.8 KiB).
    static func byteLabel(_ value: Double) -> String {
        if value >= 1_000_000 { return "\(trimmed(value / 1_000_000)) MB" }
        if value >= 1000 { return "\(trimmed(value / 1000)) kB" }
        return "\(Int(value)) B"
    }

    private static func trimmed(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return tenths % 10 == 0 ? String(tenths / 10) : "\(tenths / 10).\(tenths % 10)"
    }

    private static func shortened(_ text: String, to length: Int) -> String {
        text.count <= length ? text : String(text.prefix(length - 1)) + "…"
    }
}
