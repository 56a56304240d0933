import BenchPasses
import Benchmark
import CBenchSupport
import ExecutorPeers
import Dispatch
import NIOCore
import NIOPosix
import RunLoopCore
import Synchronization

// Executor hops (issue 14, item 7): a default actor on the global executor (`HopRunner`) awaits
// a method of an actor whose executor is X, 1,000 times per sample. Each call hops onto X's
// thread and back to the global executor, so the hop back costs the same for every X and the
// difference between rows is X's enqueue, wake-up and run. The peers:
//   Loop                   an actor whose `unownedExecutor` is a `LoopThread`'s loop
//   SwiftNIO               an actor on a SwiftNIO event loop (`loop.executor`)
//   Dispatch serial queue  an actor on a serial `DispatchQueue`, through the small
//                          `SerialExecutor` a Linux user writes (libdispatch on Linux has none)
// The malloc counts are per call, both hops included: the runtime's own share is the same in
// every row, so the Loop row's excess over NIO's is what the loop adds per job.
//
// "job on the executor": inside an actor method on X, `Task.yield()` 1,000 times. Each yield
// puts the task on the global executor (Swift 6.3's `Task.yield` enqueues on the task's
// executor preference, else the global one, never on a serial executor), and the isolated
// statement after it brings the task back: one job enqueued on X from a Dispatch worker and
// run on X's thread per operation. Without that statement the compiler drops the hop back and
// the whole loop runs on the global executor, measuring nothing of X (as an earlier version
// of this benchmark did). Its mallocs per operation are the runtime's continuation job plus
// whatever X adds per job.
//
// "job from the executor's own thread": inside an actor method on X, a chain of 1,000
// unstructured tasks, each created by the one before (`Task { }` inherits the actor's
// isolation), so each job is enqueued on X from X's own thread and no thread switches; its
// mallocs per operation are the task's own plus whatever X adds per job.

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
            // From a default actor, so every call returns with a hop back (see `HopRunner`).
            let runner = HopRunner()
            await runner.hops(to: target, warmUpRoundTrips)
            benchmark.startMeasurement()
            await runner.hops(to: target, benchmark.scaledIterations.count)
            benchmark.stopMeasurement()
        }
        registerOnPeer("job on the executor: Task.yield inside an actor on it · \(name)", name, peer) { target, benchmark in
            await target.yields(warmUpRoundTrips)
            benchmark.startMeasurement()
            await target.yields(benchmark.scaledIterations.count)
            benchmark.stopMeasurement()
        }
        registerOnPeer("job from the executor's own thread: a task on an actor on it creates the next · \(name)", name, peer) { target, benchmark in
            await target.taskChain(warmUpRoundTrips)
            benchmark.startMeasurement()
            await target.taskChain(benchmark.scaledIterations.count)
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
