/// Something RunLoopKit wants a person to know about: a refused input, a failed system call, a
/// misuse that the library recovered from. Every module reports through ``Diagnostics``.
///
/// ```swift
/// import RunLoopDiagnostics
///
/// let diagnostic = Diagnostic(severity: .warning, id: "example.demo", message: "demo", item: "tick")
/// print(diagnostic)   // "[warning] example.demo (tick): demo"
/// ```
public struct Diagnostic: Sendable, Equatable, CustomStringConvertible {
    /// How bad it is. Nothing below ``fault`` stops the process.
    public enum Severity: Int, Sendable, Comparable, CustomStringConvertible {
        /// Worth knowing (a high-water mark, a debug print asked for).
        case info
        /// Input was ignored or adjusted; the library carried on as documented.
        case warning
        /// An operation failed (a system call, a refused registration); it was reported and undone.
        case error
        /// The process is about to stop (objc4's fatal pool errors).
        case fault

        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rawValue < rhs.rawValue }

        public var description: String {
            switch self {
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            case .fault: "fault"
            }
        }
    }

    /// How bad it is.
    public let severity: Severity
    /// A stable identifier, `module.what` (for example `loop.fd-source-refused`), safe to match on.
    public let id: DiagnosticID
    /// One sentence for a person.
    public let message: String
    /// The label of the item involved (a source, a timer, a layer), if any.
    public let item: String?

    /// Creates a diagnostic.
    public init(severity: Severity, id: DiagnosticID, message: String, item: String? = nil) {
        self.severity = severity
        self.id = id
        self.message = message
        self.item = item
    }

    /// `[severity] id (item): message`, the line the default handler prints.
    public var description: String {
        let about = item.map { " (\($0))" } ?? ""
        return "[\(severity)] \(id)\(about): \(message)"
    }
}

/// The stable identifier of a kind of ``Diagnostic``: `module.what`, lower case with dashes.
///
/// ```swift
/// let id: DiagnosticID = "loop.fd-source-refused"
/// ```
public struct DiagnosticID: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The identifier text.
    public let rawValue: String
    /// An identifier with the given text.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// An identifier written as a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
}
