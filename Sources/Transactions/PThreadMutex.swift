#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A minimal `pthread_mutex_t` wrapper.
///
/// Used instead of `Synchronization.Mutex`, whose futex implementation ThreadSanitizer cannot see
/// on Linux (false race reports). The mutex lives in its own allocation so its address is stable.
final class PThreadMutex: @unchecked Sendable {   // Sendable: every access goes through the mutex.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init failed: \(rc)")
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

/// A value guarded by a `PThreadMutex`.
final class Locked<Value>: @unchecked Sendable {   // Sendable: `value` is only touched under `lock`.
    private let lock = PThreadMutex()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try lock.withLock { try body(&value) }
    }
}

/// Writes a line to standard error without touching the C `stderr` global (not concurrency-safe
/// to reference in Swift 6 mode).
func writeToStandardError(_ line: String) {
    var text = line
    if !text.hasSuffix("\n") { text += "\n" }
    text.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
