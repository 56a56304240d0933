import PThreads
import CRunLoopShims
import RunLoopDiagnostics
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread of its own that runs its loop's default mode until ``stop()``, then ends; its
/// loop is torn down with it (W6). The place for a service's sockets, an actor pinned to a
/// loop (``Loop`` is a `SerialExecutor`), or work that must stay on one thread.
///
/// The loop keeps running with nothing registered: an internal source0 that is never
/// signalled keeps its common modes from being empty (R3/R4), so no dummy source is needed.
/// It has no descriptor, so a mode with nothing else in its wait set stays quiet: a wake-up
/// noted on the loop's own thread then costs no system call (W3).
///
/// ```swift
/// let worker = LoopThread(name: "worker")
/// worker.loop.performAndWake { print("on the worker's thread") }
/// worker.stop()    // stops the loop and joins the thread
/// ```
public final class LoopThread: Sendable {
    /// The thread's own loop (`Loop.current` on that thread).
    public let loop: Loop
    private let thread: Locked<pthread_t?>
    private let stopRequested: StopFlag
    /// Keeps the common modes non-empty while nothing else is registered.
    private let keepAlive: LoopSource

    /// Starts the thread and returns once its loop exists.
    ///
    /// - Parameters:
    ///   - name: the thread's name (visible to debuggers and `ps -L`, first 15 bytes).
    ///   - stackSize: bytes of stack, or nil for the system default.
    public init(name: String = "LoopThread", stackSize: Int? = nil) {
        let started = StartHandshake()
        let stopRequested = StopFlag()
        let keepAlive = LoopSource(label: "LoopThread keep-alive") {}
        let handle = startPThread(name: name, stackSize: stackSize) {
            let status = rlk_set_current_thread_name(name)
            if status != 0 {
                Diagnostics.report(.warning, .systemCallFailed,
                                   "naming a LoopThread: \(SystemCallError(call: "pthread_setname_np", code: status))", item: name)
            }
            let loop = Loop.current
            loop.add(keepAlive, mode: .common)
            started.publish(loop)
            while !stopRequested.isSet {
                loop.run(mode: .default, timeout: .seconds(1 << 40))
            }
            keepAlive.invalidate()
        }
        self.loop = started.waitForLoop(threadName: name)
        self.thread = Locked(handle)
        self.stopRequested = stopRequested
        self.keepAlive = keepAlive
    }

    deinit {
        if thread.withLock({ $0 }) != nil { stop() }
    }

    /// Asks the loop to stop after its current pass, then waits for the thread to end (its
    /// loop torn down, thread-exit destructors run). Idempotent. Calling it on the loop's own
    /// thread only asks: the thread cannot wait for itself.
    public func stop() {
        stopRequested.set()
        loop.stop()
        loop.wakeUp()
        guard !loop.isOwnerThread, let handle = thread.withLock({ current -> pthread_t? in
            defer { current = nil }
            return current
        }) else { return }
        let status = pthread_join(handle, nil)
        precondition(status == 0, "LoopThread: pthread_join failed (\(status))")
    }

    /// True until ``stop()`` was called.
    public var isRunning: Bool { !stopRequested.isSet }
}

/// The new thread hands its loop to the starting thread.
private final class StartHandshake: Sendable {
    private let lock = PThreadMutex()
    private let changed = PThreadCondition()
    private let published = Locked<Loop?>(nil)

    func publish(_ loop: Loop) {
        lock.withLock {
            published.withLock { $0 = loop }
            changed.broadcast()
        }
    }

    /// Waits up to 30 s (a thread that does not start in that time means the process is out of
    /// resources), then stops the process with a message that says so.
    func waitForLoop(threadName: String) -> Loop {
        let deadline = Nanoseconds.add(MonotonicClock.shared.nowNanoseconds, 30_000_000_000)
        return lock.withLock {
            while true {
                if let loop = published.withLock({ $0 }) { return loop }
                guard changed.wait(lock, untilMonotonicNanoseconds: deadline) else {
                    preconditionFailure("LoopThread '\(threadName)': the new thread did not start its loop within 30 s")
                }
            }
        }
    }
}

/// The stop request, shared by the owner and the thread.
private final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
