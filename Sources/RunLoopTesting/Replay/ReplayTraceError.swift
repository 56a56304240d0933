/// Why a trace file could not be read: the line, the field and what was wrong with it.
///
/// ```swift
/// do { _ = try ReplayTrace(parsing: "runloopkit-trace 9\n") } catch {
///     print(error)   // line 1, field "version": version 9 is not supported (this reader reads 1 and 2)
/// }
/// ```
public struct ReplayTraceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based line of the file.
    public let line: Int
    /// The field that was wrong (`version`, `t`, `label` …), or the line's kind; nil for the file as a whole.
    public let field: String?
    public let message: String

    public init(line: Int, field: String?, message: String) {
        self.line = line
        self.field = field
        self.message = message
    }

    public var description: String {
        if let field { return "line \(line), field \"\(field)\": \(message)" }
        return "line \(line): \(message)"
    }
}
