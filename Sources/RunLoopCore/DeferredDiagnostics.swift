import RunLoopDiagnostics

/// Diagnostics raised while the loop's lock is held, kept in the loop's guarded state until
/// the lock is released and then reported (`LoopLock.Held.unlockReporting()`). A diagnostics
/// handler is user code: run under the lock, a handler that calls back into the loop (adds a
/// timer, invalidates an item) would deadlock on it. Debug builds check both ends: a plain
/// `unlock()` with diagnostics still deferred stops the process, and so does a report made
/// while the thread holds any RunLoopKit lock (`Diagnostics.report`).
///
/// Bounded: a critical section that fails many times (a teardown closing the descriptors of
/// many modes) keeps the first `capacity` diagnostics and counts the rest, which are reported
/// as one `loop.diagnostics-dropped`.
struct DeferredDiagnostics {
    /// The most diagnostics kept between a lock and its release.
    static let capacity = 16

    /// Every diagnostic deferred, kept or dropped: stored inline, so the test every release
    /// of the lock that may have deferred one makes is a single compare.
    private(set) var count = 0
    private(set) var kept: [Diagnostic] = []
    var dropped: Int { count - kept.count }

    var isEmpty: Bool { count == 0 }

    /// Keeps `diagnostic` for the release of the lock, or counts it when `capacity` are kept.
    mutating func append(_ diagnostic: Diagnostic) {
        count += 1
        if kept.count < DeferredDiagnostics.capacity { kept.append(diagnostic) }
    }

    /// Everything kept so far, leaving none.
    mutating func take() -> DeferredDiagnostics {
        defer { self = DeferredDiagnostics() }
        return self
    }

    /// Reports what was kept, in the order it was raised, then how many were dropped. Lock not
    /// held.
    @inline(never)
    func report() {
        for diagnostic in kept { Diagnostics.report(diagnostic) }
        guard dropped > 0 else { return }
        Diagnostics.report(.warning, .diagnosticsDropped,
                           "\(dropped) more diagnostics raised under a loop's lock in one critical section were dropped (the first \(DeferredDiagnostics.capacity) were reported)")
    }
}

extension LoopLock.Held {
    /// Keeps `diagnostic` to be reported when the lock is released: a function that fails
    /// under the lock calls this instead of `Diagnostics.report`, and the code that releases
    /// the lock releases it with `unlockReporting()`.
    func deferReport(_ diagnostic: Diagnostic) {
        loop.deferredDiagnostics.append(diagnostic)
    }

    /// `deferReport` of a diagnostic built from its parts.
    func deferReport(_ severity: Diagnostic.Severity, _ id: DiagnosticID, _ message: String, item: String? = nil) {
        deferReport(Diagnostic(severity: severity, id: id, message: message, item: item))
    }

    /// Releases the lock, then reports the diagnostics deferred under it. For every critical
    /// section that may defer one; debug builds stop the process when a plain `unlock()`
    /// leaves one behind.
    @inline(__always)
    consuming func unlockReporting() {
        if loop.deferredDiagnostics.isEmpty {
            unlock()
        } else {
            unlockThenReport()
        }
    }

    /// `unlockReporting` with something to report: out of line, so the common path is one test.
    @inline(never)
    private consuming func unlockThenReport() {
        let deferred = loop.deferredDiagnostics.take()
        unlock()
        deferred.report()
    }
}

extension LoopLock.Held {
    /// Reports the diagnostics deferred so far with the lock released for the moment, then
    /// takes it back (`whileReleased`): for a rare failure deep in a critical section that its
    /// caller goes on with (a run's first and last sections), where a check before every
    /// release of the lock would cost every run.
    @inline(never)
    func reportDeferredWhileReleased() {
        let deferred = loop.deferredDiagnostics.take()
        guard !deferred.isEmpty else { return }
        whileReleased { deferred.report() }
    }
}

extension LoopLock {
    /// Runs `body` with the lock held, then releases it with `Held.unlockReporting()`.
    @inline(__always)
    func withLockReporting<R>(_ body: (borrowing Held) -> R) -> R {
        let held = lock()
        let result = body(held)
        held.unlockReporting()
        return result
    }
}
