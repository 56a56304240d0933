#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A heap-allocated `pthread_mutex_t`.
///
/// Not `Synchronization.Mutex`: on Linux that one is built on raw futex calls that
/// ThreadSanitizer cannot see, so every access it guards is reported as a race.
final class PthreadLock: @unchecked Sendable {   // Sendable: the mutex itself is the synchronisation.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// The raw mutex, for a condition variable that must wait on it.
    var raw: UnsafeMutablePointer<pthread_mutex_t> { mutex }
}
