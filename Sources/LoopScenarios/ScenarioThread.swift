#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import PThreads

/// Runs work on a new POSIX thread and joins it: the thread's autorelease pool, commit pipeline
/// and `Loop.current` are created fresh and torn down when it exits, before `run` returns.
///
/// ```swift
/// let answer = ScenarioThread.run(name: "worker") { 6 * 7 }
/// ```
enum ScenarioThread {
    /// Runs `body` on a new thread, waits for the thread to exit and returns the body's value.
    static func run<T: Sendable>(name: String, _ body: @escaping @Sendable () -> T) -> T {
        let thread = start(name: name, body)
        return thread.join()
    }

    /// Starts `body` on a new thread; call `join()` on the handle to wait for its value.
    static func start<T: Sendable>(name: String, _ body: @escaping @Sendable () -> T) -> Handle<T> {
        let result = Locked<T?>(nil)
        let thread = startPThread(name: "scenario thread '\(name)'") {
            let value = body()
            result.withLock { $0 = value }
        }
        return Handle(thread: thread, result: result)
    }

    /// A started thread (or one a replay did not start). Join it exactly once (`join` consumes the handle).
    struct Handle<T: Sendable>: ~Copyable {
        fileprivate let thread: pthread_t?
        fileprivate let result: Locked<T?>

        /// A handle for a thread that was not started: `join` returns `value` at once.
        static func notStarted(_ value: T) -> Handle {
            Handle(thread: nil, result: Locked(value))
        }

        /// Waits for the thread to exit (its thread-local destructors included) and returns
        /// the body's value.
        consuming func join() -> T {
            if let thread {
                let status = pthread_join(thread, nil)
                precondition(status == 0, "scenario thread: pthread_join failed (\(status))")
            }
            // The thread has exited, so its body has stored the value.
            return result.withLock { $0 }!
        }
    }
}

