import RunLoopDiagnostics

/// The stable ids of RunLoopKitGLib's diagnostics.
extension DiagnosticID {
    /// A system call of a GLib bridge failed; the message says which and what was done about it.
    public static let glibSystemCallFailed: DiagnosticID = "glib.system-call-failed"
}
