/// A tiny SVG builder: elements are appended as text with escaped attributes and content,
/// so the output is well-formed XML by construction.
package struct SVGDocument {
    private(set) var body: [String] = []
    var width: Int
    var height: Int

    package init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // XML 1.0 forbids most control characters even when escaped.
                if scalar.value < 0x20 && scalar != "\n" && scalar != "\t" { out += " " } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }

    package static func number(_ value: Double) -> String {
        TextLogExporter.formatFixed(value, decimals: 1)
    }

    private static func attributes(_ pairs: [(String, String)]) -> String {
        pairs.map { " \($0.0)=\"\(escape($0.1))\"" }.joined()
    }

    mutating func element(_ name: String, _ attributes: [(String, String)], text: String? = nil, title: String? = nil) {
        let attrs = Self.attributes(attributes)
        var inner = ""
        if let title { inner += "<title>\(Self.escape(title))</title>" }
        if let text { inner += Self.escape(text) }
        body.append(inner.isEmpty ? "<\(name)\(attrs)/>" : "<\(name)\(attrs)>\(inner)</\(name)>")
    }

    package mutating func rect(x: Double, y: Double, width: Double, height: Double, fill: String,
                       stroke: String? = nil, title: String? = nil, extra: [(String, String)] = []) {
        var attrs = [("x", Self.number(x)), ("y", Self.number(y)), ("width", Self.number(max(0, width))),
                     ("height", Self.number(max(0, height))), ("fill", fill)]
        if let stroke { attrs.append(("stroke", stroke)) }
        element("rect", attrs + extra, title: title)
    }

    package mutating func line(x1: Double, y1: Double, x2: Double, y2: Double, stroke: String, width: Double = 1,
                       dash: String? = nil, title: String? = nil) {
        var attrs = [("x1", Self.number(x1)), ("y1", Self.number(y1)), ("x2", Self.number(x2)), ("y2", Self.number(y2)),
                     ("stroke", stroke), ("stroke-width", Self.number(width))]
        if let dash { attrs.append(("stroke-dasharray", dash)) }
        element("line", attrs, title: title)
    }

    package mutating func text(_ content: String, x: Double, y: Double, size: Double = 12, anchor: String = "start",
                       fill: String = "#222", weight: String? = nil, rotate: Double? = nil) {
        var attrs = [("x", Self.number(x)), ("y", Self.number(y)), ("font-size", Self.number(size)),
                     ("text-anchor", anchor), ("fill", fill)]
        if let weight { attrs.append(("font-weight", weight)) }
        if let rotate { attrs.append(("transform", "rotate(\(Self.number(rotate)) \(Self.number(x)) \(Self.number(y)))")) }
        element("text", attrs, text: content)
    }

    package mutating func polyline(_ points: [(Double, Double)], stroke: String, width: Double = 2) {
        let list = points.map { "\(Self.number($0.0)),\(Self.number($0.1))" }.joined(separator: " ")
        element("polyline", [("points", list), ("fill", "none"), ("stroke", stroke), ("stroke-width", Self.number(width)),
                             ("stroke-linejoin", "round")])
    }

    mutating func circle(x: Double, y: Double, radius: Double, fill: String, title: String? = nil) {
        element("circle", [("cx", Self.number(x)), ("cy", Self.number(y)), ("r", Self.number(radius)), ("fill", fill)], title: title)
    }

    mutating func raw(_ fragment: String) { body.append(fragment) }

    package func render() -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\""
            + " font-family=\"Helvetica, Arial, sans-serif\">\n"
            + body.joined(separator: "\n") + "\n</svg>\n"
    }
}

/// Axis helpers: "nice" tick steps (1, 2, 5 × 10ⁿ).
package enum AxisTicks {
    static func niceStep(for range: Double, ticks: Int) -> Double {
        guard range > 0, range.isFinite else { return 1 }
        let raw = range / Double(max(1, ticks))
        var magnitude = 1.0
        while magnitude * 10 <= raw { magnitude *= 10 }
        while magnitude > raw { magnitude /= 10 }
        for factor in [1.0, 2.0, 5.0, 10.0] where magnitude * factor >= raw { return magnitude * factor }
        return magnitude * 10
    }

    /// Ticks from 0 to at least `maximum`.
    package static func ticks(upTo maximum: Double, count: Int = 5) -> [Double] {
        let step = niceStep(for: maximum <= 0 ? 1 : maximum, ticks: count)
        var values: [Double] = [0]
        while values.last! < maximum - step * 1e-9 { values.append(values.last! + step) }
        if values.count == 1 { values.append(step) }
        return values
    }
}
