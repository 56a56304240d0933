import PThreads
import CRunLoopShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// One loop per thread (W5) and its teardown at thread exit (W6).

extension Loop {
    /// The calling thread's loop, created on first use (W5).
    ///
    /// ```swift
    /// let loop = Loop.current
    /// loop.perform { print("next pass") }
    /// ```
    public static var current: Loop {
        if let box = pthread_getspecific(LoopRegistry.shared.key) {
            return Unmanaged<ThreadLoopBox>.fromOpaque(box).takeUnretainedValue().loop
        }
        return LoopRegistry.shared.loopForCurrentThread()
    }

    /// The calling thread's loop, lent to `body` without a retain (the thread's slot keeps it
    /// until the thread exits); nil, without making one, when the thread has none.
    @inline(__always)
    static func withCurrentIfMade<Result>(_ body: (Loop) -> Result) -> Result? {
        guard let box = pthread_getspecific(LoopRegistry.shared.key) else { return nil }
        return Unmanaged<ThreadLoopBox>.fromOpaque(box)._withUnsafeGuaranteedRef { box in
            Unmanaged.passUnretained(box.loop)._withUnsafeGuaranteedRef(body)
        }
    }

    /// The main thread's loop, from any thread. Its async queue is `DispatchQueue.main`.
    ///
    /// ```swift
    /// Loop.main.performAndWake { print("on the main thread") }
    /// ```
    public static var main: Loop { LoopRegistry.shared.mainLoop }

    /// Ends a detached loop's life now, exactly as thread exit ends a thread's loop (W6):
    /// pending Swift Concurrency jobs run first when called on the loop's thread (elsewhere each
    /// is reported as `loop.job-not-run`), then sources are removed (their `cancel` callouts
    /// run), observers invalidated, timers detached, pending blocks and async work dropped,
    /// every descriptor closed. Afterwards the
    /// loop is finished for every mode and ignores new items.
    ///
    /// Only for loops made with `Loop(clock:)`, and not while running. Without it, a detached
    /// loop is torn down when its last reference goes away (items whose closures capture the
    /// loop keep it alive, as in CF).
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// defer { loop.tearDown() }
    /// ```
    public func tearDown() {
        precondition(!isRegistered,
                     "Loop.tearDown() is for loops made with Loop(clock:); a thread's own loop is torn down when the thread exits")
        precondition(currentMode == nil, "Loop.tearDown() called while the loop is running")
        tearDownAtThreadExit()
    }

    /// W6: the thread is exiting. Pending jobs run first (on the loop's thread; elsewhere they
    /// are reported), then sources are removed (cancel callouts), observers invalidated, timers
    /// detached without invalidation, pending blocks and async work dropped, every descriptor
    /// closed.
    func tearDownAtThreadExit() {
        runPendingJobsBeforeTeardown()
        let held = lock.lock()
        guard !held.loop.tornDown else {
            held.unlock()
            return
        }
        // What the loop lets go of is released after the lock: a last release runs deinit code
        // (a port's closes its descriptor and may report a failure; a dropped block's closure
        // may hold the user's objects), which must not run under the loop's lock.
        let commonItems = held.loop.commonItems
        var letGo: [AnyObject] = []
        held.loop.commonItems = CommonItems()
        var cancels: [(LoopSource, Loop.Mode)] = []
        var observers: [LoopObserver] = []
        let modeNames = held.loop.modeOrder
        for name in modeNames {
            let state = held.loop.modes[name]!
            let sources0 = held[state].sources0
            for source in sources0 {
                source.unregister(from: state)
                source.unbind(self)
                cancels.append((source, name))
            }
            held[state].sources0.removeAll()
            let ports = held[state].ports.values, files = held[state].files.values
            for port in ports { port.core.unbind(self) }
            held[state].ports.removeAll()
            for file in files { file.core.unbind(self) }
            held[state].files.removeAll()
            let timers = held[state].timers.removeAll()
            for timer in timers {
                _ = timer.leave(modeID: state.id, ofLoop: identity)
                timer.core.unbind(self)
            }
            letGo.append(contentsOf: Array(ports) as [AnyObject])
            letGo.append(contentsOf: Array(files) as [AnyObject])
            letGo.append(contentsOf: timers as [AnyObject])
            state.rearm(waiting: false, held)
            observers.append(contentsOf: held[state].observers)
            held[state].observers.removeAll()
            state.observersChanged(held)
        }
        let unrunJobs = takeJobs(held)
        let droppedQueues = dropQueues(held)
        closeDescriptors(held)
        held.unlockReporting()
        withExtendedLifetime((commonItems, letGo, droppedQueues)) {}
        // A torn-down loop never calls out again: drop the sink and interceptor, and the owner
        // thread's copies of them, so nothing they hold (often the loop itself) stays alive.
        updateInstrumentation { $0 = Instrumentation() }
        owned.adopt(sink: nil, interceptor: nil)
        reportUnrunJobs(unrunJobs)
        for (source, name) in cancels { source.cancelCallout?(self, name) }
        for observer in observers { observer.invalidate() }
    }
}

/// What the thread-specific slot holds: the loop, and how many destructor rounds remain
/// (CF's `__CFTSDKeyRunLoopCntr`), so other thread-exit destructors can still use the loop.
final class ThreadLoopBox {
    let loop: Loop
    var roundsLeft: Int
    init(loop: Loop, roundsLeft: Int) {
        self.loop = loop
        self.roundsLeft = roundsLeft
    }
}

/// The process-wide table thread → loop (CF's `__CFRunLoops`).
final class LoopRegistry: Sendable {
    static let shared = LoopRegistry()

    private struct Table {
        var loops: [UInt: Loop] = [:]
        var main: Loop?
        /// Threads whose loop could not be made, with why: the process is stopping, after the
        /// report of that failure (see `reportThenStop`).
        var unmade: [UInt: SystemCallError] = [:]
    }

    let key: pthread_key_t
    private let table = Locked(Table())
    /// Held while the main loop is made, which any thread may ask for first: one maker, so no
    /// loop is made twice and one dropped. Never held while reporting.
    private let makingMain = PThreadMutex()

    private init() {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { raw in
            guard let raw else { return }
            LoopRegistry.threadExiting(raw)
        }
        precondition(status == 0, "Loop: pthread_key_create failed (\(status))")
        self.key = key
    }

    /// The main loop, made on first use.
    var mainLoop: Loop {
        let (main, raised) = mainLoopHoldingReports()
        raised.report()
        return main
    }

    /// The main loop, and what making it raised if this call made it, not yet reported.
    ///
    /// Every loop is made outside the table's lock, and what its creation raised (a mode whose
    /// descriptors could not be created) is reported only once the loop is registered: the
    /// diagnostics handler may call back into the library, and a handler that asks for this
    /// loop then finds it. Asking before it is registered would make another loop, which fails
    /// the same way when the process is out of descriptors, and reports again, without end.
    private func mainLoopHoldingReports() -> (Loop, DeferredDiagnostics) {
        if let main = table.withLock({ $0.main }) { return (main, DeferredDiagnostics()) }
        let thread = rlk_main_pthread()
        let (made, raised) = makingMain.withLock { () -> (Result<Loop, SystemCallError>, DeferredDiagnostics) in
            if let main = table.withLock({ $0.main }) { return (.success(main), DeferredDiagnostics()) }
            if let failure = table.withLock({ $0.unmade[Self.slot(thread)] }) { Loop.stopForMissingDescriptors(failure) }
            let (made, raised) = Loop.holdingReports(clock: MonotonicClock.shared, owner: thread,
                                                     ownerTID: Int64(getpid()), registered: true, isMain: true)
            table.withLock { table in
                switch made {
                case .success(let loop):
                    table.loops[Self.slot(thread)] = loop
                    table.main = loop
                case .failure(let failure):
                    table.unmade[Self.slot(thread)] = failure
                }
            }
            return (made, raised)
        }
        switch made {
        case .success(let loop): return (loop, raised)
        case .failure(let failure): reportThenStop(failure, raised)
        }
    }

    /// The calling thread's loop, made on first use (see `mainLoopHoldingReports`): registered
    /// and kept in the thread-specific slot before its creation's diagnostics are reported.
    /// Only this thread makes and registers a loop for itself (the main thread's may be made
    /// by any thread, under `makingMain`), so no two loops are made for one thread.
    func loopForCurrentThread() -> Loop {
        let thread = pthread_self()
        let loop: Loop
        var raised: DeferredDiagnostics
        if pthread_equal(thread, rlk_main_pthread()) != 0 {
            (loop, raised) = mainLoopHoldingReports()
        } else {
            let (existing, unmade) = table.withLock { ($0.loops[Self.slot(thread)], $0.unmade[Self.slot(thread)]) }
            if let unmade { Loop.stopForMissingDescriptors(unmade) }
            if let existing {
                (loop, raised) = (existing, DeferredDiagnostics())
            } else {
                let (made, madeRaised) = Loop.holdingReports(clock: MonotonicClock.shared, owner: thread,
                                                             ownerTID: rlk_gettid(), registered: true, isMain: false)
                switch made {
                case .success(let made):
                    table.withLock { $0.loops[Self.slot(thread)] = made }
                    (loop, raised) = (made, madeRaised)
                case .failure(let failure):
                    table.withLock { $0.unmade[Self.slot(thread)] = failure }
                    reportThenStop(failure, madeRaised)
                }
            }
        }
        let box = Unmanaged.passRetained(ThreadLoopBox(loop: loop, roundsLeft: Int(PTHREAD_DESTRUCTOR_ITERATIONS) - 1))
        let status = pthread_setspecific(key, box.toOpaque())
        if status != 0 {
            // Out of memory for the slot: the loop stays registered (the next Loop.current finds
            // it in the table), but the thread's exit cannot tear it down.
            box.release()
            raised.append(SystemCallError(call: "pthread_setspecific", code: status)
                .diagnostic(.systemCallFailed, "keeping the thread's loop for its exit; the loop will not be torn down when the thread ends", item: nil))
        }
        raised.report()
        return loop
    }

    /// A thread whose loop cannot be made (see `Loop.stopForMissingDescriptors`): reports why,
    /// then stops the process. The thread is marked unmade first, so a diagnostics handler that
    /// asks for its loop stops the process at once instead of failing and reporting again.
    private func reportThenStop(_ failure: SystemCallError, _ raised: DeferredDiagnostics) -> Never {
        raised.report()
        Loop.stopForMissingDescriptors(failure)
    }

    /// The table's key for `thread`.
    private static func slot(_ thread: pthread_t) -> UInt { UInt(thread) }

    /// The thread-specific destructor: wait for the last round, then tear the loop down.
    static func threadExiting(_ raw: UnsafeMutableRawPointer) {
        let box = Unmanaged<ThreadLoopBox>.fromOpaque(raw).takeUnretainedValue()
        if box.roundsLeft > 1 {
            box.roundsLeft -= 1
            // Only an exhausted memory fails this (ENOMEM); then tear the loop down now.
            if pthread_setspecific(shared.key, raw) == 0 { return }
        }
        let loop = box.loop
        Unmanaged<ThreadLoopBox>.fromOpaque(raw).release()
        if loop.isMainLoop { return }  // the main loop lives as long as the process
        shared.table.withLock { _ = $0.loops.removeValue(forKey: slot(loop.owner)) }
        loop.tearDownAtThreadExit()
    }

    /// Loops currently registered (tests).
    var count: Int { table.withLock { $0.loops.count } }
}
