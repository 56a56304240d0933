#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PThreads

/// The thread-local slot holding each thread's pipeline (retained). Its destructor runs at thread
/// exit: it warns about an uncommitted transaction and releases everything, so nothing leaks.
private let pipelineKey: pthread_key_t = {
    var key = pthread_key_t()
    let rc = pthread_key_create(&key) { raw in
        guard let raw else { return }
        let pipeline = Unmanaged<CommitPipeline>.fromOpaque(raw).takeRetainedValue()
        pipeline.threadWillExit()
    }
    precondition(rc == 0, "Transactions: pthread_key_create failed (\(rc))")
    return key
}()

extension CommitPipeline {
    /// This thread's pipeline, created on first use (with the system clock).
    ///
    /// ```swift
    /// CommitPipeline.current.wakeUpHandler = { loop.wakeUp() }
    /// ```
    public static var current: CommitPipeline {
        if let raw = pthread_getspecific(pipelineKey) {
            return Unmanaged<CommitPipeline>.fromOpaque(raw).takeUnretainedValue()
        }
        let pipeline = CommitPipeline()
        pthread_setspecific(pipelineKey, Unmanaged.passRetained(pipeline).toOpaque())
        return pipeline
    }

    /// Makes this pipeline the thread's `current` while `body` runs, then restores the previous
    /// one. Synchronous only; useful to drive an isolated pipeline in tests.
    ///
    /// ```swift
    /// let pipeline = CommitPipeline(clock: ManualTransactionClock())
    /// pipeline.asCurrent {
    ///     layer.setNeedsLayout()
    ///     pipeline.commitIfNeeded(reason: .beforeWaiting)
    /// }
    /// ```
    public func asCurrent<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        let previous = pthread_getspecific(pipelineKey)
        pthread_setspecific(pipelineKey, Unmanaged.passRetained(self).toOpaque())
        defer {
            let raw = pthread_getspecific(pipelineKey)
            pthread_setspecific(pipelineKey, previous)
            if let raw { Unmanaged<CommitPipeline>.fromOpaque(raw).release() }
        }
        return try body()
    }
}

/// "thread 0x…" for the calling thread (its pthread id).
func currentThreadDescription() -> String {
    #if canImport(Glibc)
    return "thread 0x" + String(UInt(pthread_self()), radix: 16)
    #else
    return "thread \(pthread_self())"
    #endif
}
