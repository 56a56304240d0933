/// One failed check of the toolkit: a message that says what went wrong, and where the check
/// was asked for.
///
/// ```swift
/// let failure = LoopTestFailure("2 timers still pending", at: LoopTestSourceLocation())
/// print(failure.message)
/// ```
public struct LoopTestFailure: Sendable, CustomStringConvertible {
    /// The whole text, as it appears in the test report.
    public let message: String
    public let location: LoopTestSourceLocation

    public init(_ message: String, at location: LoopTestSourceLocation) {
        self.message = message
        self.location = location
    }

    /// The message's first line: what happened.
    public var headline: String { String(message.prefix { $0 != "\n" }) }

    /// The message after its first line (empty when it has one line).
    public var details: String {
        guard let newline = message.firstIndex(of: "\n") else { return "" }
        return String(message[message.index(after: newline)...])
    }

    /// "location: message".
    public var description: String { "\(location): \(message)" }
}
