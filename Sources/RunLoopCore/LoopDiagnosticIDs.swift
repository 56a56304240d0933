import RunLoopDiagnostics
/// The stable ids of RunLoopCore's diagnostics (see ``Diagnostic/id``).
extension DiagnosticID {
    /// R1: `run` was asked to run `.common`; it returned `.finished`.
    public static let runCommonModes: DiagnosticID = "loop.run-common-modes"
    /// `run(timeout:)` got a NaN number of seconds; one polling pass was made.
    public static let runTimeoutNaN: DiagnosticID = "loop.run-timeout-nan"
    /// An item was not added: see ``Loop/AddRefusal``.
    public static let addRefused: DiagnosticID = "loop.add-refused"
    /// A block or submitted work reached a loop whose thread has exited; it was not run.
    public static let workAfterTeardown: DiagnosticID = "loop.work-after-teardown"
    /// A Swift Concurrency job was left on a loop torn down off its thread, or released: it
    /// was not run (on its thread, teardown runs the jobs left instead).
    public static let jobNotRun: DiagnosticID = "loop.job-not-run"
    /// A system call of the loop failed; the message says which and what was done about it.
    public static let systemCallFailed: DiagnosticID = "loop.system-call-failed"
    /// A mode's wait set failed (`epoll_wait` error other than EINTR): the mode is treated as
    /// empty from then on, so runs of it return `.finished` instead of spinning.
    public static let waitFailed: DiagnosticID = "loop.wait-failed"
    /// A mode's descriptors could not be created (out of descriptors or memory): items added to
    /// it are refused with ``Loop/AddRefusal/systemCall(_:)``, a run of it returns `.finished`,
    /// and the next add or run tries to create it again.
    public static let modeUnavailable: DiagnosticID = "loop.mode-unavailable"
    /// Information: the kernel offers no io_uring multishot poll (too old, disabled, or blocked
    /// by seccomp), so `Loop.main` checks the main dispatch queue with one system call per
    /// polling pass instead of reading the kernel's completion ring. Reported once.
    public static let mainQueuePolled: DiagnosticID = "loop.main-queue-polled"
    /// Debug builds: a loop slept a whole `lostWakeUpBound` while announced work (a job,
    /// submitted work, a stop) waited for it; the message carries the wake-up state (issue 26).
    public static let lostWakeUp: DiagnosticID = "loop.lost-wake-up"
    /// A `HostedRun` was released while its run was still going: its Exit never ran and the
    /// loop's run stays pushed. End a hosted run with `end()` (or drive it to a result).
    public static let hostedRunAbandoned: DiagnosticID = "loop.hosted-run-abandoned"
    /// One critical section of a loop raised more diagnostics than the loop keeps for reporting
    /// once its lock is released (16: a teardown that failed to close the descriptors of many
    /// modes); the message says how many were dropped.
    public static let diagnosticsDropped: DiagnosticID = "loop.diagnostics-dropped"
}
