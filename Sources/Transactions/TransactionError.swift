/// Misuse of the transaction API that the caller can recover from.
public enum TransactionError: Error, Equatable, CustomStringConvertible {
    /// `LayerTransaction.commit()` without a matching `LayerTransaction.begin()` on this thread.
    /// The implicit transaction (opened by a mark) is not committed by `commit()`: use
    /// `LayerTransaction.flush()`.
    case commitWithoutBegin(thread: String, implicitOpen: Bool)

    public var description: String {
        switch self {
        case let .commitWithoutBegin(thread, implicitOpen):
            let hint = implicitOpen
                ? " (only the implicit transaction is open; use LayerTransaction.flush() to commit it)"
                : ""
            return "LayerTransaction.commit() called with no explicit transaction open on \(thread);"
                + " every commit() must match a LayerTransaction.begin()\(hint)"
        }
    }
}
