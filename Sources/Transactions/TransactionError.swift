/// Misuse of the transaction API that the caller can recover from.
public enum TransactionError: Error, Equatable, CustomStringConvertible {
    /// `LayerTransaction.commit()` without a matching `LayerTransaction.begin()` on this thread.
    /// The implicit transaction (opened by a mark) is not committed by `commit()`: use
    /// `LayerTransaction.flush()`.
    case commitWithoutBegin(thread: String, implicitOpen: Bool)
    /// A duration that must not be negative was (an animation, a clock advance).
    case negativeDuration(Duration, what: String)
    /// `setValue(_:forKey:)` got a value of the wrong type for a typed key.
    case invalidValue(key: String, expected: String, got: String)

    public var description: String {
        switch self {
        case let .commitWithoutBegin(thread, implicitOpen):
            let hint = implicitOpen
                ? " (only the implicit transaction is open; use LayerTransaction.flush() to commit it)"
                : ""
            return "LayerTransaction.commit() called with no explicit transaction open on \(thread);"
                + " every commit() must match a LayerTransaction.begin()\(hint)"
        case let .negativeDuration(duration, what):
            return "\(what) got a negative duration (\(duration)); durations here must be zero or more"
        case let .invalidValue(key, expected, got):
            return "setValue(_:forKey: \"\(key)\") needs a \(expected), got \(got)"
        }
    }
}
