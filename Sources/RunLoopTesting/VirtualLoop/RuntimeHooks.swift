#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Two hooks of the Swift Concurrency runtime, which it calls for every job sent to the global
// concurrent executor and for every lookup of the main actor's executor. Installed once per
// process on first use, never removed, and chained: each calls the hook that was installed
// before it (or the runtime's own function). They act only on a virtual-loop test's thread,
// while its driver runs (`VirtualLoopMonitor.current` is set there): a job that thread sends to
// the global executor is queued on the test's loop instead (the generic executor may run a job
// on any thread; the test chooses its loop's), and a lookup of the main executor tells the
// test to wait for the main queue. Every other thread, and so every other test, is untouched.
//
// In Swift 6.3 a task that does not prefer the loop (`Task {…}` isolated to the test, made by
// `Task.detached`, or in a loop callout) hops to the global executor for every nonisolated
// async call, `VirtualClock.sleep` included: without the first hook such a task would leave
// the loop at its first await.
//
// swift-concurrency-extras' `withMainSerialExecutor` writes the same enqueue hook; a process
// that uses both keeps whichever was written last.
//
// A sleep on a real clock does not reach the runtime's enqueue-with-deadline hook in Swift 6.3
// (`Task.sleep` asks a scheduling executor first, and the default executor is one): the test's
// loop sees it as a scheduling executor instead (Loop+RealClockSleeps.swift).

/// `swift_task_enqueueGlobal_hook_t`: the hook and the runtime's own function it wraps.
typealias EnqueueGlobalOriginal = @convention(thin) (UnownedJob) -> Void
typealias EnqueueGlobalHook = @convention(thin) (UnownedJob, EnqueueGlobalOriginal) -> Void
/// `swift_task_getMainExecutor_hook_t`.
typealias GetMainExecutorOriginal = @convention(thin) () -> UnownedSerialExecutor
typealias GetMainExecutorHook = @convention(thin) (GetMainExecutorOriginal) -> UnownedSerialExecutor

enum RuntimeHooks {
    /// Installs the hooks the first time it is read; whether they are in place (false when the
    /// runtime does not export them: then nothing is reported as having left the loop).
    static let installed: Bool = install()

    // Written once, inside `install`, before the hooks that read them are published; read-only
    // afterwards, from any thread.
    nonisolated(unsafe) private static var previousEnqueueGlobal: EnqueueGlobalHook?
    nonisolated(unsafe) private static var previousGetMainExecutor: GetMainExecutorHook?

    private static func install() -> Bool {
        guard let enqueueGlobal = hookSlot("swift_task_enqueueGlobal_hook", as: EnqueueGlobalHook?.self),
              let getMainExecutor = hookSlot("swift_task_getMainExecutor_hook", as: GetMainExecutorHook?.self)
        else { return false }
        _ = MainQueue.isCurrent   // marks the main queue before any test asks
        _ = ProgramStack.images   // read before any test's finding is symbolicated
        previousEnqueueGlobal = enqueueGlobal.pointee
        previousGetMainExecutor = getMainExecutor.pointee
        enqueueGlobal.pointee = { job, original in
            if let monitor = VirtualLoopMonitor.current {
                monitor.runOnLoop(job)
            } else if let previous = RuntimeHooks.previousEnqueueGlobal {
                previous(job, original)
            } else {
                original(job)
            }
        }
        getMainExecutor.pointee = { original in
            VirtualLoopMonitor.current?.noteMainActorUse()
            if let previous = RuntimeHooks.previousGetMainExecutor { return previous(original) }
            return original()
        }
        return true
    }

    /// The runtime's variable `name`, a hook pointer, looked up in the running process.
    private static func hookSlot<Hook>(_ name: String, as: Hook.Type) -> UnsafeMutablePointer<Hook>? {
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, name) else { return nil }
        return symbol.assumingMemoryBound(to: Hook.self)
    }
}

/// A per-thread pointer slot (`pthread_key_t`): the monitor of the virtual-loop test whose loop
/// runs on the calling thread. The slot holds the monitor unretained; whoever sets it keeps the
/// monitor alive until it clears it.
enum MonitorSlot {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "RunLoopTesting: pthread_key_create failed: \(status)")
        return key
    }()

    static func set(_ monitor: VirtualLoopMonitor?) {
        let pointer = monitor.map { UnsafeMutableRawPointer(Unmanaged.passUnretained($0).toOpaque()) }
        let status = pthread_setspecific(key, pointer)
        precondition(status == 0, "RunLoopTesting: pthread_setspecific failed: \(status)")
    }

    static var current: VirtualLoopMonitor? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<VirtualLoopMonitor>.fromOpaque(pointer).takeUnretainedValue()
    }
}
