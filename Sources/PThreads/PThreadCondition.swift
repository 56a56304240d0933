#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A `pthread_cond_t` on the monotonic clock, waited on with a `PThreadMutex` held.
///
/// ```swift
/// let lock = PThreadMutex(), changed = PThreadCondition()
/// var ready = false
/// lock.withLock {
///     while !ready { if !changed.wait(lock, untilMonotonicNanoseconds: 0) { break } }
/// }
/// ```
package final class PThreadCondition: @unchecked Sendable {   // Sendable: the condition is the synchronisation
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    package init() {
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        defer { pthread_condattr_destroy(&attributes) }
        #if !canImport(Darwin)
        let clockStatus = pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)   // immune to wall-clock jumps
        precondition(clockStatus == 0, "pthread_condattr_setclock failed: \(clockStatus)")
        #endif
        let status = pthread_cond_init(condition, &attributes)
        precondition(status == 0, "pthread_cond_init failed: \(status)")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    /// Wakes every waiter.
    package func broadcast() { pthread_cond_broadcast(condition) }

    /// Waits, with `mutex` held by the caller, until woken or until `deadline` nanoseconds of
    /// `CLOCK_MONOTONIC` (`UInt64.max`: no deadline). Returns false when the deadline passed.
    /// Like every condition wait it may return early: re-check the predicate in a loop.
    package func wait(_ mutex: PThreadMutex, untilMonotonicNanoseconds deadline: UInt64) -> Bool {
        wait(LentMutex(mutex), untilMonotonicNanoseconds: deadline)
    }

    /// `wait(_:untilMonotonicNanoseconds:)` on a lent mutex.
    package func wait(_ mutex: LentMutex, untilMonotonicNanoseconds deadline: UInt64) -> Bool {
        if deadline == .max {
            pthread_cond_wait(condition, mutex.raw)
            return true
        }
        var spec = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex.raw, &spec) != ETIMEDOUT
    }
}

extension Locked {
    /// Waits on `condition` with the lock held until `isDone` returns true for the value, or
    /// until `deadline` nanoseconds of `CLOCK_MONOTONIC` (`UInt64.max`: no deadline). Returns
    /// whether `isDone` held. Whoever changes the value in a way `isDone` reads must broadcast
    /// `condition` after `withLock` returns.
    ///
    /// ```swift
    /// let ready = Locked(false), changed = PThreadCondition()
    /// // elsewhere: ready.withLock { $0 = true }; changed.broadcast()
    /// let isReady = ready.wait(on: changed, untilMonotonicNanoseconds: .max) { $0 }
    /// ```
    package func wait(on condition: PThreadCondition, untilMonotonicNanoseconds deadline: UInt64,
                     until isDone: (inout Value) -> Bool) -> Bool {
        lock.withLock {
            while !isDone(&value) {
                if !condition.wait(lock, untilMonotonicNanoseconds: deadline) { return isDone(&value) }
            }
            return true
        }
    }
}
