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

    /// "location: message".
    public var description: String { "\(location): \(message)" }
}
