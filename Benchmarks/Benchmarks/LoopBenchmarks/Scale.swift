import Benchmark
import BenchPasses
import CBenchSupport
import CLibuvPeer
import RunLoopCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// Scale (issue 12, item 4): what items registered but idle cost a pass, and whether loops on
// separate threads slow each other down. Every work here compares `Loop` with `Loop` itself
// in a smaller setting, so the ratio reads "how much the extra items or threads add":
//
//   idle items     a polling pass + 1 callout in a mode that also holds 10,000 idle source0s,
//                  10,000 idle fd sources or 100,000 armed timers due in an hour or more, vs
//                  the same pass in a mode without them (fd sources: with one, since the first
//                  one already makes the pass wait in epoll; timers: with one, since the first
//                  one makes the pass read the clock; target ≤ 1.10×);
//                  and a due timer firing beside the 100,000 armed timers vs alone.
//   threads        the polling pass of a loop on a thread pinned to CPU 0 while a second loop
//                  makes passes on a thread pinned to CPU 1 (this machine has 2), vs the same
//                  loop with CPU 1 idle (linear scaling: ≈ 1×); and the same two settings on
//                  libuv, whose ratio shows what the machine itself adds.
//
// The items live in modes of their own ("scale …"), built once per process, so they never
// reach the other benchmarks' default mode.

/// Modes filled once per benchmark process and kept (one loop per thread: the runner's).
nonisolated(unsafe) var filledScaleModes: Set<String> = []
/// What the filled modes hold, kept alive for the process's lifetime.
nonisolated(unsafe) var scaleItems: [AnyObject] = []

/// Fills `mode` of `loop` once with `fill`; later samples reuse it.
func fillOnce(_ loop: Loop, _ mode: Loop.Mode, _ fill: () -> Void) {
    guard !filledScaleModes.contains(mode.name) else { return }
    fill()
    filledScaleModes.insert(mode.name)
}

/// The polling pass of `PollingPass.swift` with no hooks, run in `mode`.
func measurePollingPasses(_ benchmark: Benchmark, _ loop: Loop, _ mode: Loop.Mode, _ what: String) {
    measurePasses(benchmark, what) {
        loop.perform(inMode: mode, label: "bench") { calloutCount &+= 1 }
        loop.run(mode: mode, timeout: 0)
    }
}

func registerScaleBenchmarks() {
    let none = "Loop, none in the mode"

    // MARK: idle source0s

    let sourcesWork = "scale: polling pass + 1 callout, 10,000 idle source0s in the mode"
    Benchmark("\(sourcesWork) · Loop") { benchmark in
        let loop = Loop.current
        let mode = Loop.Mode("scale sources0")
        fillOnce(loop, mode) {
            scaleItems += addIdleSources0(idleSources0Count, to: loop, mode: mode) { calloutCount &+= 1 }
        }
        measurePollingPasses(benchmark, loop, mode, "Loop pass beside idle source0s")
    }
    Benchmark("\(sourcesWork) · \(none)") { benchmark in
        measurePollingPasses(benchmark, Loop.current, Loop.Mode("scale empty"), "Loop pass, empty mode")
    }

    // MARK: idle fd sources

    let filesWork = "scale: polling pass + 1 callout, 10,000 idle fd sources in the mode"
    Benchmark("\(filesWork) · Loop") { benchmark in
        let loop = Loop.current
        let mode = Loop.Mode("scale fd sources")
        var refused = 0
        fillOnce(loop, mode) {
            let added = addIdleFileSources(idleFileSourcesCount, to: loop, mode: mode) { calloutCount &+= 1 }
            scaleItems += added.sources
            refused = added.refused
        }
        if refused > 0 {
            benchmark.error("\(refused) of \(idleFileSourcesCount) idle fd sources could not be made or added (ulimit -n?)")
            return
        }
        measurePollingPasses(benchmark, loop, mode, "Loop pass beside idle fd sources")
    }
    Benchmark("\(filesWork) · Loop, 1 idle fd source in the mode") { benchmark in
        let loop = Loop.current
        let mode = Loop.Mode("scale one fd source")
        fillOnce(loop, mode) {
            scaleItems += addIdleFileSources(1, to: loop, mode: mode) { calloutCount &+= 1 }.sources
        }
        measurePollingPasses(benchmark, loop, mode, "Loop pass beside one idle fd source")
    }
    // The same on libuv (uv_poll_t on eventfds never written), as its own work: both wait in
    // epoll_wait, so its ratio is what the kernel adds for 10,000 registered descriptors.
    let uvFilesWork = "scale: libuv polling pass + 1 callout, 10,000 idle fds"
    Benchmark("\(uvFilesWork) · \(libuvBesideIdleFds)") { benchmark in
        measureCPasses(benchmark, "libuv pass beside idle fds", create: { bench_uv_polling_idle_fds_create(Int32(idleFileSourcesCount)) },
                       passes: { Int(bench_uv_passes($0, $1)) }, destroy: { bench_uv_destroy($0) })
    }
    Benchmark("\(uvFilesWork) · libuv, 1 idle fd") { benchmark in
        measureCPasses(benchmark, "libuv pass beside one idle fd", create: { bench_uv_polling_idle_fds_create(1) },
                       passes: { Int(bench_uv_passes($0, $1)) }, destroy: { bench_uv_destroy($0) })
    }

    // MARK: armed timers

    let timersWork = "scale: polling pass + 1 callout, 100,000 armed timers in the mode"
    Benchmark("\(timersWork) · Loop") { benchmark in
        let loop = Loop.current
        let mode = Loop.Mode("scale armed timers")
        fillOnce(loop, mode) { scaleItems += armIdleTimers(armedTimersCount, on: loop, mode: mode) { calloutCount &+= 1 } }
        measurePollingPasses(benchmark, loop, mode, "Loop pass beside armed timers")
    }
    Benchmark("\(timersWork) · Loop, 1 armed timer in the mode") { benchmark in
        let loop = Loop.current
        let mode = Loop.Mode("scale one armed timer")
        fillOnce(loop, mode) { scaleItems += armIdleTimers(1, on: loop, mode: mode) { calloutCount &+= 1 } }
        measurePollingPasses(benchmark, loop, mode, "Loop pass beside one armed timer")
    }

    let dueWork = "scale: due timer fires, 100,000 armed timers in the mode"
    func measureDueTimer(_ benchmark: Benchmark, _ mode: Loop.Mode, armed: Bool) {
        let loop = Loop.current
        fillOnce(loop, mode) {
            if armed { scaleItems += armIdleTimers(armedTimersCount, on: loop, mode: mode) { calloutCount &+= 1 } }
            if let timer = addAlwaysDueTimer(to: loop, mode: mode, fire: { calloutCount &+= 1 }) { scaleItems.append(timer) }
        }
        measurePasses(benchmark, "Loop due timer\(armed ? " beside armed timers" : "")") {
            loop.run(mode: mode, timeout: 0)
        }
    }
    Benchmark("\(dueWork) · Loop") { benchmark in
        measureDueTimer(benchmark, Loop.Mode("scale due beside armed"), armed: true)
    }
    Benchmark("\(dueWork) · \(none)") { benchmark in
        measureDueTimer(benchmark, Loop.Mode("scale due alone"), armed: false)
    }

    // MARK: loops on threads

    let threadsWork = "scale: polling pass + 1 callout on CPU 0 while a second loop makes passes on CPU 1"
    Benchmark("\(threadsWork) · Loop") { benchmark in
        measureLoopThread(benchmark, withNeighbour: true, makeRunner: { loopPassRunner() })
    }
    Benchmark("\(threadsWork) · Loop, alone (CPU 0)") { benchmark in
        measureLoopThread(benchmark, withNeighbour: false, makeRunner: { loopPassRunner() })
    }
    // The same two settings on libuv, as its own work: how much a busy second CPU slows a
    // pass on this machine when the two loops share nothing at all.
    let uvThreadsWork = "scale: libuv polling pass + 1 callout on CPU 0 while a second libuv loop makes passes on CPU 1"
    Benchmark("\(uvThreadsWork) · \(libuvWithNeighbour)") { benchmark in
        measureLoopThread(benchmark, withNeighbour: true, makeRunner: libuvPassRunner)
    }
    Benchmark("\(uvThreadsWork) · libuv, alone (CPU 0)") { benchmark in
        measureLoopThread(benchmark, withNeighbour: false, makeRunner: libuvPassRunner)
    }
}

/// The implementation names `ratios.py` treats as "ours" in the libuv scaling reference works.
let libuvWithNeighbour = "libuv beside a busy libuv loop"
let libuvBesideIdleFds = "libuv beside 10,000 idle fds"

/// Times `benchmark.scaledIterations` passes of a loop on a thread pinned to CPU 0. With
/// `withNeighbour`, a second loop of the same kind on a thread pinned to CPU 1 makes passes from
/// before the measured span starts until after it ends, so the span is one loop's passes beside a
/// busy neighbour. Timing one thread, not the slower of two, keeps the host's slow periods on
/// CPU 1 (seconds long on this VM, see Docs/Benchmarks.md) out of the ratio. Each thread checks
/// its own callouts.
func measureLoopThread(_ benchmark: Benchmark, withNeighbour: Bool, makeRunner: @escaping @Sendable () -> PassRunner?) {
    let passes = benchmark.scaledIterations.count
    let start = ThreadStart()
    let neighbour = withNeighbour ? PinnedThread(cpu: 1) {
        guard let runner = makeRunner() else {
            start.failures.wrappingAdd(1, ordering: .relaxed)
            start.ready.wrappingAdd(1, ordering: .releasing)
            return
        }
        defer { runner.tearDown() }
        // Ready only once it is making passes, so the whole measured span has a busy neighbour.
        var made = runner.run(warmUpPasses)
        var expected = warmUpPasses
        start.ready.wrappingAdd(1, ordering: .releasing)
        while !start.done.load(ordering: .acquiring) {
            made += runner.run(warmUpPasses)
            expected += warmUpPasses
        }
        if made != expected { start.failures.wrappingAdd(1, ordering: .relaxed) }
    } : nil
    let measured = PinnedThread(cpu: 0) {
        guard let runner = makeRunner() else {
            start.failures.wrappingAdd(1, ordering: .relaxed)
            start.ready.wrappingAdd(1, ordering: .releasing)
            return
        }
        defer { runner.tearDown() }
        _ = runner.run(warmUpPasses)
        start.ready.wrappingAdd(1, ordering: .releasing)
        while !start.go.load(ordering: .acquiring) { sched_yield() }
        if runner.run(passes) != passes { start.failures.wrappingAdd(1, ordering: .relaxed) }
    }
    while start.ready.load(ordering: .acquiring) < (withNeighbour ? 2 : 1) { sched_yield() }
    benchmark.startMeasurement()
    start.go.store(true, ordering: .releasing)
    measured.join()
    benchmark.stopMeasurement()
    start.done.store(true, ordering: .releasing)
    neighbour?.join()
    let failed = start.failures.load(ordering: .relaxed)
    if failed > 0 { benchmark.error("\(failed) loop threads failed to set up or did not make one callout per pass") }
}

/// The start line of `measureLoopThread`: threads report ready, the measured one waits for `go`,
/// the neighbour runs until `done`; both count failures.
final class ThreadStart: Sendable {
    let ready = Atomic<Int>(0)
    let go = Atomic<Bool>(false)
    let done = Atomic<Bool>(false)
    let failures = Atomic<Int>(0)
}
