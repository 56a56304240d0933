import RunLoopCore
/// Minimal JSON text building: string escaping and number formatting without Foundation.
package enum JSONText {
    /// `value` as a JSON string literal, quotes included.
    package static func string(_ value: String) -> String {
        var out = "\""
        out.reserveCapacity(value.utf8.count + 2)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// Nanoseconds as microseconds with three decimals (trace-event `ts` unit).
    package static func microseconds(_ instant: LoopInstant) -> String { microseconds(instant.nanoseconds) }

    package static func microseconds(_ nanoseconds: UInt64) -> String {
        let fraction = String(nanoseconds % 1_000)
        return "\(nanoseconds / 1_000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// A finite number; non-finite values become 0 (JSON has no NaN or infinity).
    package static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// An object from already-encoded values, keys in the given order.
    package static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }
}
