/// Whole and fractional milliseconds of a `Duration`, for scenario logs and checks.
enum DurationText {
    /// The duration in milliseconds (fractional).
    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
    }
}
