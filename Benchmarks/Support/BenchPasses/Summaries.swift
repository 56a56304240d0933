// How the tools summarise their samples: quantiles, and the cells of their markdown tables.

/// The value at `fraction` (0...1) of the sorted values (nearest rank below).
public func quantile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    return sorted[Int(Double(sorted.count - 1) * fraction)]
}

/// The middle value (the upper one of an even count).
public func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

/// Nanoseconds for a table cell: whole from 100 up, one decimal below.
public func nanosecondsText(_ value: Double) -> String {
    value >= 100 ? String(Int(value.rounded())) : String(Double(Int(value * 10)) / 10)
}

/// A ratio for a table cell: two decimals ("0.60×"), three below 0.1 ("0.089×"), so a ratio
/// judged against a limit of 0.1 keeps two significant digits.
public func ratioText(_ value: Double) -> String {
    let decimals = value < 0.1 ? 3 : 2
    var scale = 1
    for _ in 0..<decimals { scale *= 10 }
    let units = Int((value * Double(scale)).rounded())
    let fraction = String(units % scale)
    return "\(units / scale).\(String(repeating: "0", count: decimals - fraction.count))\(fraction)×"
}
