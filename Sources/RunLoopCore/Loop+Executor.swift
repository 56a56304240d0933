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
        enqueueJob(UnownedJob(job), asTaskExecutor: false)
    }

    /// Queues a job in ``jobModes`` and wakes the loop: the enqueue and the wake-up's decision
    /// in one critical section, then the wake-up's write (as `perform` + `wakeUp()` would do
    /// with two). A loop whose thread has exited is reported and the job stays unrun.
    func enqueueJob(_ job: UnownedJob, asTaskExecutor: Bool) {
        let held = lock.lock()
        guard !held.loop.tornDown else {
            held.unlock()
            reportBlockAfterTeardown(label: "job")
            return
        }
        guard held.loop.jobModesExist else { return enqueueJobCreatingModes(job, asTaskExecutor: asTaskExecutor, held) }
        appendJobThenWake(job, asTaskExecutor: asTaskExecutor, held, reporting: false)
    }

    /// `enqueueJob` while some of ``jobModes`` may not exist: creates them first. Out of line:
    /// a mode whose descriptors cannot be made is reported once the lock is released, and that
    /// test stays off the usual enqueue.
    @inline(never)
    private func enqueueJobCreatingModes(_ job: UnownedJob, asTaskExecutor: Bool, _ held: consuming LoopLock.Held) {
        held.loop.jobModesExist = createJobModes(held)
        appendJobThenWake(job, asTaskExecutor: asTaskExecutor, held, reporting: true)
    }

    /// Both ends of `enqueueJob`: queues the job, decides the wake-up, releases the lock (with
    /// `unlockReporting()` when `reporting`: modes were created, which may have deferred a
    /// report), then writes the wake-up.
    @inline(__always)
    private func appendJobThenWake(_ job: UnownedJob, asTaskExecutor: Bool, _ held: consuming LoopLock.Held, reporting: Bool) {
        appendBlock(PendingBlock(target: held.loop.jobTarget, label: "job", job: job, asTaskExecutor: asTaskExecutor), held)
        let wakeUp = decideWakeUp(held)
        if reporting { held.unlockReporting() } else { held.unlock() }
        if InputReporting.isActive { reportInput(.wakeUp, label: "") }
        write(wakeUp)
    }

    /// Creates the modes ``jobModes`` names (B1: queueing a block creates its modes); whether
    /// they all exist now.
    private func createJobModes(_ held: borrowing LoopLock.Held) -> Bool {
        var all = true
        for mode in held.loop.jobTarget.modes where mode != .common && modeState(mode, create: true, held) == nil {
            all = false
        }
        return all
    }

    /// This loop as an unowned serial executor (for an actor's `unownedExecutor`).
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Queues the job of a task that prefers this loop (`Task(executorPreference:)`,
    /// `withTaskExecutorPreference`) and wakes the loop; any thread. The runtime calls this
    /// witness, not ``enqueue(_:)``, for the loop as a `TaskExecutor`, so such a job runs as a
    /// nonisolated task on the loop's thread and an actor's job runs isolated to the loop, each
    /// without an extra hop.
    @_implements(TaskExecutor, enqueue(_:))
    public func enqueueTaskJob(_ job: consuming ExecutorJob) {
        enqueueJob(UnownedJob(job), asTaskExecutor: true)
    }

    /// This loop as an unowned task executor (for `Task(executorPreference:)`).
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Stops the process unless called where ``isIsolatingCurrentContext()`` holds.
    public func checkIsolated() {
        guard isIsolating else {
            preconditionFailure(isMainLoop
                ? "code isolated to the main loop's executor ran off the main thread"
                : "code isolated to a Loop executor ran off that loop's thread or while the loop was not running")
        }
    }

    /// True exactly where the loop's jobs run: on its thread while it runs (or while its
    /// teardown runs the jobs left, W6). For ``Loop/main`` it is the whole main thread, as for
    /// the main actor, whose top-level code runs before the loop does.
    public func isIsolatingCurrentContext() -> Bool? { isIsolating }

    private var isIsolating: Bool {
        guard isOwnerThread else { return false }
        return isMainLoop || owned.runningJobsAtTeardown || currentMode != nil
    }

    /// The modes whose passes run jobs; `[.common]` (every common mode) unless changed. A job
    /// takes the modes in effect when it is enqueued.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// loop.jobModes = [.default]
    /// ```
    public var jobModes: [Loop.Mode] {
        get { lock.withLock { $0.loop.jobTarget.modes } }
        set {
            let target = PendingBlock.Target(modes: newValue.isEmpty ? [.common] : newValue)
            lock.withLock { held in
                held.loop.jobTarget = target
                held.loop.jobModesExist = false
            }
        }
    }
}

// MARK: Jobs left at teardown (W6)

extension Loop {
    /// How many rounds of jobs teardown runs: jobs enqueued by the jobs it runs are run too, up
    /// to this bound, so two actors that keep calling each other cannot hold a thread's exit.
    static let teardownJobRounds = 1_000

    /// W6 for jobs: a job must not vanish with its loop, or its task never resumes. On the
    /// loop's thread, teardown first runs the pending jobs, with no mode (a last block step
    /// that runs only jobs, whatever their modes); what they enqueue meanwhile runs in the next
    /// round. Off that thread nothing can run them: teardown reports them (`reportUnrunJobs`).
    func runPendingJobsBeforeTeardown() {
        guard isOwnerThread else { return }
        owned.runningJobsAtTeardown = true
        defer { owned.runningJobsAtTeardown = false }
        for _ in 0..<Loop.teardownJobRounds {
            let jobs = lock.withLock { takeJobs($0) }
            if jobs.isEmpty { return }
            for job in jobs { runJobAtTeardown(job) }
        }
    }

    private func runJobAtTeardown(_ block: PendingBlock) {
        switch block.work {
        case .job(let job): __RLK_IS_CALLING_OUT_TO_A_JOB__(job)
        case .taskJob(let job): __RLK_IS_CALLING_OUT_TO_A_TASK_JOB__(job)
        case .closure, .taken: break
        }
    }

    /// Reports each job a loop is torn down (or released) with, which will never run: its
    /// task stays suspended (`loop.job-not-run`). Lock not held.
    func reportUnrunJobs(_ jobs: [PendingBlock]) {
        for _ in jobs {
            Diagnostics.report(.error, .jobNotRun,
                               "a Swift Concurrency job was pending when its loop (thread '\(ownerName)') was torn down off that thread or released; it will not run and its task stays suspended",
                               item: ownerName)
        }
    }
}

