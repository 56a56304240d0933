import BenchPasses
import Benchmark
import CBenchSupport
import Dispatch
import NIOCore
import NIOPosix
import RunLoopCore
import Synchronization

// Executor hops (issue 14, item 7): a task on the default executor awaits a method of an actor
// whose executor is X, 1,000 times per sample. Each call hops onto X's thread and the task hops
// back to the default executor, so the hop back costs the same for every X and the difference
// between rows is X's enqueue, wake-up and run. The peers:
//   Loop                   an actor whose `unownedExecutor` is a `LoopThread`'s loop
//   SwiftNIO               an actor on a SwiftNIO event loop (`loop.executor`)
//   Dispatch serial queue  an actor on a serial `DispatchQueue`, through the small
//                          `SerialExecutor` a Linux user writes (libdispatch on Linux has none)
// The malloc counts are per call, both hops included: the runtime's own share is the same in
// every row, so the Loop row's excess over NIO's is what the loop adds per job.
//
// "job on the executor" isolates one job: inside an actor method on X, `Task.yield()` 1,000
// times, each an enqueue on X from X's own thread and a run there (no thread switch, no hop
// back); its mallocs per operation are the executor's own per job.

/// The actor every peer hosts.
actor HopTarget {
    private let executor: UnownedSerialExecutor
    private(set) var calls = 0

    init(executor: UnownedSerialExecutor) { self.executor = executor }

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor }

    func hop() { calls &+= 1 }

    /// `count` jobs on this executor and nothing else: each `Task.yield()` re-enqueues the
    /// task on the actor's executor from its own thread.
    func yields(_ count: Int) async {
        for _ in 0..<count { await Task.yield() }
    }
}

/// A serial `DispatchQueue` as a `SerialExecutor`: one `async` (a closure) per job.
final class DispatchQueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) { queue = DispatchQueue(label: label) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

/// One peer's executor: made in the benchmark's set-up, ended in its tear-down.
protocol HopPeer: AnyObject, Sendable {
    /// Starts the executor's thread and returns the actor on it.
    func start() -> HopTarget
    func stop()
}

/// `@unchecked Sendable`: `thread` is set in `start()` and cleared in `stop()`, both on the
/// benchmark runner between samples, never while a sample runs.
final class LoopHopPeer: HopPeer, @unchecked Sendable {
    private var thread: LoopThread?

    func start() -> HopTarget {
        let thread = LoopThread(name: "hop-loop")
        self.thread = thread
        return HopTarget(executor: thread.loop.asUnownedSerialExecutor())
    }

    func stop() {
        thread?.stop()
        thread = nil
    }
}

/// `@unchecked Sendable`: see `NIOPeer` (its loop thread is pinned to `roundTripCPU`).
final class NIOHopPeer: HopPeer, @unchecked Sendable {
    private let peer = NIOPeer()

    func start() -> HopTarget {
        do { try peer.start() } catch { preconditionFailure("SwiftNIO's loop did not start: \(error)") }
        return HopTarget(executor: peer.loop!.executor.asUnownedSerialExecutor())
    }

    func stop() { peer.stop() }
}

/// `@unchecked Sendable`: `executor` is set in `start()` and cleared in `stop()`, between samples.
final class DispatchHopPeer: HopPeer, @unchecked Sendable {
    private var executor: DispatchQueueExecutor?

    func start() -> HopTarget {
        let executor = DispatchQueueExecutor(label: "hop-queue")
        self.executor = executor
        return HopTarget(executor: executor.asUnownedSerialExecutor())
    }

    func stop() { executor = nil }
}

/// The actor of the running benchmark, set in its set-up.
let currentHopTarget = Mutex<HopTarget?>(nil)

func registerExecutorHopBenchmarks() {
    let peers: [(name: String, peer: any HopPeer)] = [
        ("Loop", LoopHopPeer()),
        ("SwiftNIO", NIOHopPeer()),
        ("Dispatch serial queue", DispatchHopPeer()),
    ]
    for (name, peer) in peers {
        registerOnPeer("executor hop: await an actor on it, from a task · \(name)", name, peer) { target, benchmark in
            for _ in 0..<warmUpRoundTrips { await target.hop() }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { await target.hop() }
            benchmark.stopMeasurement()
        }
        registerOnPeer("job on the executor: Task.yield inside an actor on it · \(name)", name, peer) { target, benchmark in
            await target.yields(warmUpRoundTrips)
            benchmark.startMeasurement()
            await target.yields(benchmark.scaledIterations.count)
            benchmark.stopMeasurement()
        }
    }
}

/// A benchmark that runs `work` against the actor of `peer`, started in the set-up and stopped
/// in the tear-down.
private func registerOnPeer(_ title: String, _ name: String, _ peer: any HopPeer,
                            _ work: @escaping @Sendable (HopTarget, Benchmark) async -> Void) {
    Benchmark(title) { benchmark async in
        guard let target = currentHopTarget.withLock({ $0 }) else {
            benchmark.error("the executor of \(name) did not start")
            return
        }
        await work(target, benchmark)
    } setup: {
        let target = peer.start()
        currentHopTarget.withLock { $0 = target }
    } teardown: {
        currentHopTarget.withLock { $0 = nil }
        peer.stop()
    }
}
