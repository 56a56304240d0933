#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A pthread mutex for state shared between a scenario's threads (Synchronization.Mutex gives
/// false TSan reports on Linux).
///
/// ```swift
/// let lock = ScenarioLock()
/// lock.withLock { counter += 1 }
/// ```
final class ScenarioLock: @unchecked Sendable {
    // The pthread_mutex_t lives at a stable heap address for the object's lifetime.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() {
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed (\(status))")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
