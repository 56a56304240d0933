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
final class Watchdog: Sendable {
    private struct Shared {
        var stopping = false
        var started = false
        var thread: pthread_t?
        var threadID: Int64 = 0
        var period: Double
        /// Bumped by `setPeriod`, so a wait in progress restarts with the new period.
        var periodGeneration = 0
    }

    private let shared: Locked<Shared>
    private let changed = PThreadCondition()
    private let name: String
    private let tick: @Sendable () -> Void

    init(name: String, period: Double, tick: @escaping @Sendable () -> Void) {
        self.name = name
        self.shared = Locked(Shared(period: period))
        self.tick = tick
    }

    /// The kernel id of the running thread (0 before start, -1 without /proc); set before
    /// `start()` returns.
    var kernelThreadID: Int64 { shared.withLock { $0.threadID } }

    func setPeriod(_ seconds: Double) {
        shared.withLock {
            $0.period = seconds
            $0.periodGeneration += 1
        }
        changed.broadcast()
    }

    /// Starts the thread; returns once it runs.
    func start() {
        shared.withLock {
            precondition(!$0.started, "Watchdog \(name) started twice")
            $0.started = true
        }
        // The thread keeps the watchdog alive until its body returns.
        let handle = startPThread(name: name) { self.body() }
        shared.withLock { $0.thread = handle }
        _ = shared.wait(on: changed, untilMonotonicNanoseconds: .max) { $0.threadID != 0 }
    }

    /// Wakes the thread, waits for it to exit, and joins it. Idempotent.
    func stop() {
        let handle: pthread_t? = shared.withLock { state in
            state.stopping = true
            defer { state.thread = nil }
            return state.thread
        }
        changed.broadcast()
        guard let handle else { return }
        if pthread_equal(handle, pthread_self()) != 0 {
            // Stopped from its own tick (the owner was released there): it exits after the
            // tick returns; nobody can join it, so let it clean up after itself.
            let status = pthread_detach(handle)
            precondition(status == 0, "Watchdog \(name): pthread_detach failed (\(status))")
        } else {
            let status = pthread_join(handle, nil)
            precondition(status == 0, "Watchdog \(name): pthread_join failed (\(status))")
        }
    }

    private func body() {
        shared.withLock { $0.threadID = currentKernelThreadID() }
        changed.broadcast()
        while true {
            let (period, generation) = shared.withLock { ($0.period, $0.periodGeneration) }
            let deadline = Self.monotonicNanoseconds() &+ UInt64((max(0, period) * 1e9).rounded())
            let woken = shared.wait(on: changed, untilMonotonicNanoseconds: deadline) {
                $0.stopping || $0.periodGeneration != generation
            }
            if shared.withLock({ $0.stopping }) { return }
            if woken { continue }   // a new period: wait again with it
            tick()
        }
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        // CLOCK_MONOTONIC with a valid pointer cannot fail.
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }
}
