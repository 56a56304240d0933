#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A fixed set of mutexes shared by many small objects, each object using the one its number
/// picks (lock striping; objc4 keeps its side tables the same way).
///
/// A mutex of its own costs an object two heap blocks (the `PThreadMutex` and its
/// `pthread_mutex_t`, 80 bytes with malloc's rounding); with thousands of objects, a service's
/// connections for example, that is most of what each one weighs. A stripe costs nothing per
/// object but the number it keeps, at the price of a rare wait on a stripe another object holds.
///
/// Two rules keep stripes from deadlocking, because two objects may share one: a thread holds
/// at most one stripe at a time, and never takes a lock that can be held while a stripe is taken
/// (the callers' own lock order). Each mutex has a cache line of its own, so threads working on
/// different stripes do not slow each other down. The table lives as long as the process would
/// use it: the mutexes it lends are never freed while it exists.
///
/// ```swift
/// let stripes = MutexStripes(count: 64)
/// stripes[7].withLock { /* state of object number 7 */ }
/// ```
public final class MutexStripes: @unchecked Sendable {   // Sendable: the mutexes are the synchronisation; the table never changes
    /// Bytes from one mutex to the next: a cache line, so neighbours never share one.
    private static let spacing = 64
    private let base: UnsafeMutableRawPointer
    /// `count - 1`; `count` is a power of two, so picking a stripe is a mask.
    @usableFromInline let mask: UInt64

    /// A table of `count` mutexes (a power of two).
    public init(count: Int) {
        precondition(count > 0 && count & (count - 1) == 0, "MutexStripes: count \(count) is not a power of two")
        precondition(MemoryLayout<pthread_mutex_t>.size <= Self.spacing, "a pthread_mutex_t outgrew a cache line")
        base = .allocate(byteCount: count * Self.spacing, alignment: Self.spacing)
        for index in 0..<count {
            let mutex = (base + index * Self.spacing).bindMemory(to: pthread_mutex_t.self, capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            let status = pthread_mutex_init(mutex, nil)
            precondition(status == 0, "pthread_mutex_init failed: \(status)")
        }
        mask = UInt64(count - 1)
    }

    deinit {
        for index in 0...Int(mask) {
            let mutex = (base + index * Self.spacing).assumingMemoryBound(to: pthread_mutex_t.self)
            pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
        }
        base.deallocate()
    }

    /// The number of mutexes.
    public var count: Int { Int(mask) + 1 }

    /// The mutex of object number `number`; valid while the table exists.
    public subscript(number: UInt64) -> LentMutex {
        let index = Int(number & mask)
        return LentMutex(unsafeMutex: (base + index * Self.spacing).assumingMemoryBound(to: pthread_mutex_t.self))
    }
}
