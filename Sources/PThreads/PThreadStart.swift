#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts `body` on a new POSIX thread and returns its handle, to be joined exactly once with
/// `pthread_join`. A raw pthread rather than `Thread` or a dispatch queue: RunLoopKit's
/// per-thread state (loop, pool, pipeline) is torn down by thread-exit destructors, which only a
/// thread of one's own ends predictably. `stackSize` (bytes) overrides the default stack.
///
/// ```swift
/// let thread = startPThread { print("on a new thread") }
/// pthread_join(thread, nil)
/// ```
package func startPThread(name: String = "thread", stackSize: Int? = nil,
                         _ body: @escaping @Sendable () -> Void) -> pthread_t {
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    if let stackSize {
        let status = pthread_attr_setstacksize(&attributes, stackSize)
        precondition(status == 0, "\(name): pthread_attr_setstacksize(\(stackSize)) failed: \(status)")
    }
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    #if canImport(Darwin)
    var thread: pthread_t?
    #else
    var thread = pthread_t()
    #endif
    let status = pthread_create(&thread, &attributes, { raw in
        // The new thread owns the retain taken above.
        Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().body()
        return nil
    }, context)
    precondition(status == 0, "\(name): pthread_create failed: \(status)")
    #if canImport(Darwin)
    return thread!
    #else
    return thread
    #endif
}

/// Runs `body` on a new POSIX thread and waits for the thread to end, its thread-exit
/// destructors included.
///
/// ```swift
/// runOnNewPThread { Loop.current.run(mode: .default, timeout: 0) }
/// ```
package func runOnNewPThread(name: String = "thread", stackSize: Int? = nil,
                            _ body: @escaping @Sendable () -> Void) {
    let thread = startPThread(name: name, stackSize: stackSize, body)
    let status = pthread_join(thread, nil)
    precondition(status == 0, "\(name): pthread_join failed: \(status)")
}

/// The closure handed to the new thread through pthread_create's context pointer.
private final class ThreadBody {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
