import Dispatch
import NIOCore
import NIOPosix
import RunLoopCore
import CBenchSupport
import BenchPasses

// The executors an actor can hop onto in the executor benchmarks (LoopBenchmarks' ExecutorHop
// and the executor-pairs tool): a loop, a SwiftNIO event loop and a serial DispatchQueue, each
// hosting the same actor.

/// The actor every peer hosts.
public actor HopTarget {
    private let executor: UnownedSerialExecutor
    public private(set) var calls = 0

    public init(executor: UnownedSerialExecutor) { self.executor = executor }

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor }

    public func hop() { calls &+= 1 }

    private var chainLeft = 0
    private var chainDone: CheckedContinuation<Void, Never>?

    /// `count` unstructured tasks one after another, each created by the one before on this
    /// actor: it inherits the isolation, so its job is enqueued on this actor's executor from
    /// that executor's own thread.
    public func taskChain(_ count: Int) async {
        chainLeft = count
        await withCheckedContinuation { continuation in
            chainDone = continuation
            nextInChain()
        }
    }

    private func nextInChain() {
        guard chainLeft > 0 else {
            chainDone?.resume()
            chainDone = nil
            return
        }
        chainLeft -= 1
        Task { self.nextInChain() }
    }

    /// `count` round trips through the global executor, each ending in a job on this actor's
    /// executor: the isolated increment after the yield is what makes the task hop back.
    public func yields(_ count: Int) async {
        for _ in 0..<count {
            await Task.yield()
            calls &+= 1
        }
    }
}

/// Where the hops start: a default actor, so that the return from each call is a hop back
/// onto the global executor. A plain task's hop back is dropped by the compiler when nothing
/// after the call needs the task's executor (the next call hops anyway), and the calls then
/// run one after another on the target's thread without a switch; the isolated increment after
/// each call keeps the hop.
public actor HopRunner {
    public private(set) var returns = 0

    public init() {}

    /// `count` calls of `target.hop()`, each a hop onto the target's executor and back.
    public func hops(to target: HopTarget, _ count: Int) async {
        for _ in 0..<count {
            await target.hop()
            returns &+= 1
        }
    }
}

/// A serial `DispatchQueue` as a `SerialExecutor`: one `async` (a closure) per job.
public final class DispatchQueueExecutor: SerialExecutor {
    public let queue: DispatchQueue

    public init(label: String) { queue = DispatchQueue(label: label) }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

/// One peer's executor: made in the benchmark's set-up, ended in its tear-down.
public protocol HopPeer: AnyObject, Sendable {
    /// Starts the executor's thread and returns the actor on it.
    func start() -> HopTarget
    func stop()
}

/// `@unchecked Sendable`: `thread` is set in `start()` and cleared in `stop()`, both on the
/// benchmark runner between samples, never while a sample runs.
public final class LoopHopPeer: HopPeer, @unchecked Sendable {
    private var thread: LoopThread?
    /// The CPU the loop's thread is pinned to, or nil to leave it where the process runs.
    private let cpu: Int32?

    public init(cpu: Int32? = nil) { self.cpu = cpu }

    public func start() -> HopTarget {
        let thread = LoopThread(name: "hop-loop")
        if let cpu {
            let pinned = DispatchSemaphore(value: 0)
            thread.loop.performAndWake {
                precondition(bench_pin_current_thread(cpu) == 0, "could not pin the loop's thread to CPU \(cpu)")
                pinned.signal()
            }
            pinned.wait()
        }
        self.thread = thread
        return HopTarget(executor: thread.loop.asUnownedSerialExecutor())
    }

    public func stop() {
        thread?.stop()
        thread = nil
    }
}

/// `@unchecked Sendable`: see `NIOPeer` (its loop thread is pinned to `roundTripCPU`).
public final class NIOHopPeer: HopPeer, @unchecked Sendable {
    private let peer: NIOPeer

    public init(cpu: Int32? = nil) { peer = NIOPeer(cpu: cpu ?? roundTripCPU) }

    public func start() -> HopTarget {
        do { try peer.start() } catch { preconditionFailure("SwiftNIO's loop did not start: \(error)") }
        return HopTarget(executor: peer.loop!.executor.asUnownedSerialExecutor())
    }

    public func stop() { peer.stop() }
}

/// `@unchecked Sendable`: `executor` is set in `start()` and cleared in `stop()`, between samples.
public final class DispatchHopPeer: HopPeer, @unchecked Sendable {
    private var executor: DispatchQueueExecutor?

    public init() {}

    public func start() -> HopTarget {
        let executor = DispatchQueueExecutor(label: "hop-queue")
        self.executor = executor
        return HopTarget(executor: executor.asUnownedSerialExecutor())
    }

    public func stop() { executor = nil }
}
