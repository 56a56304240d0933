import RunLoopDiagnostics

/// A loop is a Swift Concurrency executor: jobs run on its thread as callouts of its passes,
/// exactly where blocks run (B3, in the modes chosen with ``jobModes``, common modes by
/// default), traced with the callout kind ``LoopEvent/Callout/job`` and wrapped by the
/// callout interceptor (so the standard observers' per-callout pools surround each job).
///
/// An actor whose `unownedExecutor` is a loop's runs on that loop's thread:
///
/// ```swift
/// actor Counter {
///     let loop: Loop
///     var count = 0
///     init(loop: Loop) { self.loop = loop }
///     nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
///     func increment() { count += 1 }
/// }
/// ```
extension Loop: SerialExecutor, TaskExecutor {
    /// Queues `job` for the next pass that runs one of ``jobModes``, and wakes the loop. Any
    /// thread. Nothing is allocated beyond the job itself in steady state (the queue's storage
    /// is reused). A job for a loop whose thread has exited cannot run: it is reported as a
    /// diagnostic and stays unrun, as a job of any stopped executor would.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let modes = jobModesStorage.withLock { $0 }
        let block = PendingBlock(target: modes.count == 1 ? .one(modes[0]) : .several(modes),
                                 label: "job", job: unowned)
        // The block queue reports a loop whose thread has exited (the job then stays unrun).
        if enqueue(block, modes: modes) { wakeUp() }
    }

    /// This loop as an unowned serial executor (for an actor's `unownedExecutor`).
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// This loop as an unowned task executor (for `Task(executorPreference:)`).
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Stops the process unless called on the loop's thread while it runs: the only place its
    /// jobs run.
    public func checkIsolated() {
        guard isOwnerThread, currentMode != nil else {
            preconditionFailure("code isolated to a Loop executor ran off that loop's thread or while the loop was not running")
        }
    }

    /// True exactly on the loop's thread while it runs.
    public func isIsolatingCurrentContext() -> Bool? {
        isOwnerThread && currentMode != nil
    }

    /// The modes whose passes run jobs; `[.common]` (every common mode) unless changed. A job
    /// takes the modes in effect when it is enqueued.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// loop.jobModes = [.default]
    /// ```
    public var jobModes: [Loop.Mode] {
        get { jobModesStorage.withLock { $0 } }
        set { jobModesStorage.withLock { $0 = newValue.isEmpty ? [.common] : newValue } }
    }
}
