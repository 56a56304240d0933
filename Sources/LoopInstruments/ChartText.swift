import RunLoopCore

/// Text helpers shared by the SVG charts: width estimates, readable durations, clock spans.
enum ChartText {
    /// Estimated rendered width of `text` at `size` px in the charts' sans-serif font. Generous
    /// (0.6 em per character) so an estimate that fits also fits on screen.
    static func width(_ text: String, size: Double) -> Double {
        Double(text.count) * size * 0.6
    }

    /// A duration as a reader would say it: "20 ms", "1.5 ms", "47 µs", "800 ns", "1.25 s".
    static func duration(_ nanoseconds: UInt64) -> String {
        let value = Double(nanoseconds)
        if nanoseconds >= 1_000_000_000 { return trimmed(value / 1e9, decimals: 3) + " s" }
        if nanoseconds >= 1_000_000 { return trimmed(value / 1e6, decimals: 3) + " ms" }
        if nanoseconds >= 1_000 { return trimmed(value / 1e3, decimals: 1) + " µs" }
        return "\(nanoseconds) ns"
    }

    /// `value` with at most `decimals` decimals and no trailing zeros ("20", "1.5").
    static func trimmed(_ value: Double, decimals: Int) -> String {
        var text = TextLogExporter.formatFixed(value, decimals: decimals)
        guard text.contains(".") else { return text }
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// Nanoseconds from `start` to `end` on one clock (0 when `end` is earlier), the one place
    /// the charts subtract clock readings.
    static func span(from start: LoopInstant, to end: LoopInstant) -> UInt64 {
        end > start ? end.nanoseconds - start.nanoseconds : 0
    }
}

/// Short keys for labels a chart cannot write in full: the chart writes "[3]" in place of the
/// label and a legend under the plot spells every key out, so no label is ever cut.
struct ChartKeys {
    private(set) var items: [(key: String, text: String)] = []

    /// The key of `text`, made on first use (one key per distinct text).
    mutating func key(for text: String) -> String {
        if let item = items.first(where: { $0.text == text }) { return item.key }
        let key = "[\(items.count + 1)]"
        items.append((key, text))
        return key
    }

    /// The key `text` has or would get next, without making it.
    func peekKey(for text: String) -> String {
        items.first { $0.text == text }?.key ?? "[\(items.count + 1)]"
    }

    /// Height the legend needs when laid out in `width` px starting at `left`.
    func height(width: Double, left: Double, size: Double) -> Double {
        items.isEmpty ? 0 : Double(lines(width: width, left: left, size: size).count) * (size + 6) + size + 10
    }

    /// Items flowed into lines; each item is (x, key, text).
    func lines(width: Double, left: Double, size: Double) -> [[(x: Double, key: String, text: String)]] {
        var lines: [[(x: Double, key: String, text: String)]] = []
        var current: [(x: Double, key: String, text: String)] = []
        var x = left
        for item in items {
            let itemWidth = ChartText.width(item.key + " " + item.text, size: size) + 18
            if !current.isEmpty && x + itemWidth > width - 8 {
                lines.append(current)
                current = []
                x = left
            }
            current.append((x, item.key, item.text))
            x += itemWidth
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }

    /// Draws the legend with its heading at `top`.
    func draw(in svg: inout SVGDocument, top: Double, left: Double, width: Double, size: Double = 10) {
        guard !items.isEmpty else { return }
        svg.text("labels too long for their bar or marker:", x: left, y: top + size, size: size, fill: "#555")
        var y = top + size * 2 + 6
        for line in lines(width: width, left: left, size: size) {
            for item in line {
                svg.text(item.key, x: item.x, y: y, size: size, fill: "#111", weight: "bold")
                svg.text(item.text, x: item.x + ChartText.width(item.key, size: size) + 4, y: y, size: size, fill: "#333")
            }
            y += size + 6
        }
    }
}
