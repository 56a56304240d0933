#if DEBUG
import CHeldMutexes
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A non-recursive `pthread_mutex_t`, shared by every RunLoopKit module that needs a lock.
///
/// Public, unlike the rest of this internal module: Swift 6.3 does not inline an `@inlinable`
/// `package` function into another module, so with `package` access every lock and unlock in
/// the loop's pass became a call, with a retain and release of the mutex around it (callgrind:
/// the polling pass 1,520 → 1,837 instructions, the re-armed timer pass 2,473 → 3,231). The
/// module is not a product, so no user can import it either way.
///
/// Not `Synchronization.Mutex`: on Linux that one is built on raw futex calls ThreadSanitizer
/// cannot see, so `--sanitize=thread` reports a false race on every access it guards; a pthread
/// mutex is visible to it. The mutex lives in its own allocation, so its address is stable.
///
/// ```swift
/// let lock = PThreadMutex()
/// var count = 0
/// lock.withLock { count += 1 }
/// ```
public final class PThreadMutex: @unchecked Sendable {   // Sendable: the mutex is the synchronisation
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
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

    /// Locks; pair with `unlock()` on the same thread. Prefer `withLock`.
    @inlinable @inline(__always)
    public func lock() { LentMutex(self).lock() }

    /// Unlocks a mutex this thread locked.
    @inlinable @inline(__always)
    public func unlock() { LentMutex(self).unlock() }

    /// Runs `body` with the mutex held.
    @inlinable @inline(__always)
    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try LentMutex(self).withLock(body)
    }

    /// The raw mutex, for a condition variable that waits on it.
    public var raw: UnsafeMutablePointer<pthread_mutex_t> { mutex }
}

/// A `PThreadMutex` used without reference counting, for hot paths that reach it through an
/// object they keep alive. `withLock` on a mutex loaded from another object's property retains
/// the mutex around the body (the compiler cannot tell that the owner keeps it): an atomic
/// increment and decrement per critical section. The caller guarantees that the mutex outlives
/// this value.
///
/// ```swift
/// let lock = PThreadMutex()
/// LentMutex(lock).withLock { /* … */ }
/// ```
@frozen
public struct LentMutex {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    @inlinable @inline(__always)
    public init(_ owner: PThreadMutex) { mutex = owner.mutex }

    /// A mutex some other owner keeps alive and initialised for as long as this value is used
    /// (a static table of mutexes, for example).
    @inlinable @inline(__always)
    public init(unsafeMutex: UnsafeMutablePointer<pthread_mutex_t>) { mutex = unsafeMutex }

    /// The raw mutex, for a condition variable that waits on it.
    public var raw: UnsafeMutablePointer<pthread_mutex_t> { mutex }

    /// Locks; pair with `unlock()` on the same thread. Prefer `withLock`.
    @inlinable @inline(__always)
    public func lock() {
        #if DEBUG
        HeldMutexes.count += 1
        #endif
        pthread_mutex_lock(mutex)
    }

    /// Unlocks a mutex this thread locked.
    @inlinable @inline(__always)
    public func unlock() {
        pthread_mutex_unlock(mutex)
        #if DEBUG
        HeldMutexes.count -= 1
        #endif
    }

    /// Runs `body` with the mutex held.
    @inlinable @inline(__always)
    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// Debug builds: how many mutexes of this module (every RunLoopKit lock: a loop's, an item's,
/// a `Locked` value's) the calling thread holds. `LentMutex` counts each lock and unlock (a
/// lock that calls `pthread_mutex_lock` itself counts itself the same way), so
/// `Diagnostics.report` can check that no report (and so no user handler) runs under a library
/// lock. Release builds have no count and no instruction for it.
@usableFromInline
package enum HeldMutexes {
    #if DEBUG
    /// The calling thread's count; 0 when it holds none.
    @usableFromInline
    package static var count: Int32 {
        @inlinable @inline(__always) get { rlk_held_mutexes().pointee }
        @inlinable @inline(__always) set { rlk_held_mutexes().pointee = newValue }
    }
    #endif
}

/// A value guarded by a `PThreadMutex`.
///
/// ```swift
/// let names = Locked<[String]>([])
/// names.withLock { $0.append("a") }
/// ```
public final class Locked<Value>: @unchecked Sendable {   // Sendable: `value` is only touched under `lock`
    @usableFromInline let lock = PThreadMutex()
    @usableFromInline var value: Value

    public init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    public func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        try lock.withLock { () throws(E) -> R in try body(&value) }
    }
}
