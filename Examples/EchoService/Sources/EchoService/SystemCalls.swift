import RunLoopKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs a system call (or a C shim that returns -1 and sets `errno` on failure), retrying on
/// EINTR; its value or the failure. Every call the service makes goes through it.
///
/// ```swift
/// let fd = try checked("socket") { socket(AF_INET, SOCK_STREAM, 0) }.get()
/// ```
@inline(__always)
func checked<Value: FixedWidthInteger>(_ call: StaticString, _ body: () -> Value) -> Result<Value, SystemCallError> {
    while true {
        let value = body()
        if value != -1 { return .success(value) }
        let code = errno
        if code == EINTR { continue }
        return .failure(SystemCallError(call: "\(call)", code: code))
    }
}

/// Closes `fd` once, reporting a failure as `echo.connection-failed`. Not retried on EINTR:
/// Linux releases the descriptor even then, and a retry could close a number reused meanwhile.
func closeDescriptor(_ fd: Int32, _ what: @autoclosure () -> String, item: String? = nil) {
    guard close(fd) != 0 else { return }
    let code = errno
    guard code != EINTR else { return }
    Diagnostics.report(.error, .echoConnectionFailed, "closing \(what()): \(SystemCallError(call: "close", code: code))", item: item)
}

extension Result where Failure == SystemCallError {
    /// The value; nil after reporting the failure as `id` at `severity`. For calls whose failure
    /// leaves nothing to undo.
    @discardableResult
    func reportingFailure(_ id: DiagnosticID, _ what: @autoclosure () -> String, item: String? = nil,
                          severity: Diagnostic.Severity = .error) -> Success? {
        switch self {
        case .success(let value):
            return value
        case .failure(let failure):
            Diagnostics.report(severity, id, "\(what()): \(failure)", item: item)
            return nil
        }
    }
}
