import RunLoopKit

/// The stable ids of the echo service's diagnostics (reported through RunLoopKit's
/// `Diagnostics`, so `Diagnostics.setHandler` sees them with the library's own).
extension DiagnosticID {
    /// A connection could not be served (its source refused, an interest change failed, a
    /// cleanup ran twice, a descriptor would not close); the message says which. The
    /// connection is closed.
    public static let echoConnectionFailed: DiagnosticID = "echo.connection-failed"
    /// `accept4` failed for lack of descriptors or memory; accepting pauses briefly.
    public static let echoAcceptFailed: DiagnosticID = "echo.accept-failed"
    /// Installing or reading the shutdown signals' pipe failed.
    public static let echoSignalsFailed: DiagnosticID = "echo.signals-failed"
}
