import PThreads
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread that calls `tick` every `period` seconds (real time) until `stop()`, which wakes
/// it at once and joins it, so no thread outlives its owner.
final class Watchdog: @unchecked Sendable {
    // Sendable: `stopping`, `threadID` and `period` are guarded by `lock`; `cond` waits on it.
    private let lock = PThreadMutex()
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    private var stopping = false
    private var started = false
    private var thread: pthread_t?
    private var threadID: Int64 = 0
    private var period: Double
    private let name: String
    private let tick: @Sendable () -> Void

    init(name: String, period: Double, tick: @escaping @Sendable () -> Void) {
        self.name = name
        self.period = period
        self.tick = tick
        cond = .allocate(capacity: 1)
        cond.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if !canImport(Darwin)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)   // immune to wall-clock jumps
        #endif
        pthread_cond_init(cond, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(cond)
        cond.deinitialize(count: 1)
        cond.deallocate()
    }

    /// The kernel id of the running thread (0 before start, -1 without /proc); set before
    /// `start()` returns.
    var kernelThreadID: Int64 { lock.withLock { threadID } }

    func setPeriod(_ seconds: Double) {
        lock.withLock { period = seconds }
        pthread_cond_signal(cond)
    }

    /// Starts the thread; returns once it runs.
    func start() {
        lock.withLock {
            precondition(!started, "Watchdog \(name) started twice")
            started = true
        }
        // The thread keeps the watchdog alive until its body returns.
        let handle = startPThread(name: name) { self.body() }
        lock.withLock {
            thread = handle
            while threadID == 0 { pthread_cond_wait(cond, lock.raw) }
        }
    }

    /// Wakes the thread, waits for it to exit, and joins it. Idempotent.
    func stop() {
        let handle: pthread_t? = lock.withLock {
            stopping = true
            defer { thread = nil }
            return thread
        }
        pthread_cond_broadcast(cond)
        guard let handle else { return }
        if pthread_equal(handle, pthread_self()) != 0 {
            // Stopped from its own tick (the owner was released there): it exits after the
            // tick returns; nobody can join it, so let it clean up after itself.
            pthread_detach(handle)
        } else {
            pthread_join(handle, nil)
        }
    }

    private func body() {
        lock.withLock { threadID = currentKernelThreadID() }
        pthread_cond_broadcast(cond)
        while true {
            let shouldStop: Bool = lock.withLock {
                var deadline = timespec()
                clock_gettime(CLOCK_MONOTONIC, &deadline)
                let nanos = Int(deadline.tv_nsec) + Int(max(0, period) * 1e9)
                deadline.tv_sec += nanos / 1_000_000_000
                deadline.tv_nsec = nanos % 1_000_000_000
                if !stopping { _ = pthread_cond_timedwait(cond, lock.raw, &deadline) }
                return stopping
            }
            if shouldStop { return }
            tick()
        }
    }
}
