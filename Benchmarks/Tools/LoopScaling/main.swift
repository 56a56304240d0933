// Whether a loop slows down when a second loop runs on the other CPU (issue 12, item 4: N loops
// on N threads scale linearly), measured so that the host's slow periods cannot decide it.
//
// On this VM a vCPU runs ~40% slower for periods of seconds, with no steal time reported (a
// polling pass reads ~120 ns in fast periods and ~180 ns in slow ones, in one process, with the
// same memory layout). Two benchmarks timed seconds apart, or two threads whose slower one ends
// the measured span, compare fast periods with slow ones. Here one thread on CPU 0 makes its
// passes in short chunks (a few ms), alternately with a neighbour loop on CPU 1 making passes and
// with the neighbour parked in a blocking read, in both orders; each pair of neighbouring chunks
// gives one ratio, and the table reports the median and quartiles of those ratios. The same runs
// on libuv, whose two loops share nothing, as the machine's own reference.
//
//   loop-scaling [rounds] [passes per chunk]      (default 200 rounds × 20,000 passes)

import CBenchSupport
import BenchPasses
import Glibc
import Synchronization

/// The neighbour on CPU 1: makes passes while `busy`, otherwise blocks reading `wake`.
final class Neighbour: @unchecked Sendable {  // fields are atomics or set before the thread starts
    let makeRunner: @Sendable () -> PassRunner?
    let wake: Int32
    let busy = Atomic<Bool>(false)
    let running = Atomic<Bool>(false)
    let quit = Atomic<Bool>(false)
    let failures = Atomic<Int>(0)
    private var thread = pthread_t()

    init(_ makeRunner: @escaping @Sendable () -> PassRunner?) {
        self.makeRunner = makeRunner
        wake = bench_eventfd()
        guard wake >= 0 else { fatalError("loop-scaling: eventfd failed, errno \(errno)") }
        let created = pthread_create(&thread, nil, { raw in
            Unmanaged<Neighbour>.fromOpaque(raw!).takeUnretainedValue().body()
            return nil
        }, Unmanaged.passUnretained(self).toOpaque())
        guard created == 0 else { fatalError("loop-scaling: pthread_create failed: \(created)") }
    }

    private func body() {
        guard bench_pin_current_thread(1) == 0 else { fatalError("loop-scaling: could not pin to CPU 1") }
        guard let maker = makeRunner() else { fatalError("loop-scaling: the neighbour's loop could not be set up") }
        defer { maker.tearDown() }
        while !quit.load(ordering: .acquiring) {
            if busy.load(ordering: .acquiring) {
                if maker.run(64) != 64 { failures.wrappingAdd(1, ordering: .relaxed) }
                running.store(true, ordering: .releasing)
            } else {
                running.store(false, ordering: .releasing)
                guard bench_eventfd_wait(wake) != 0 else { fatalError("loop-scaling: eventfd read failed, errno \(errno)") }
            }
        }
    }

    /// Starts the neighbour's passes and returns once it is making them.
    func start() {
        busy.store(true, ordering: .releasing)
        guard bench_eventfd_post(wake) == 0 else { fatalError("loop-scaling: eventfd write failed, errno \(errno)") }
        while !running.load(ordering: .acquiring) { sched_yield() }
    }

    /// Parks the neighbour; returns once it has stopped making passes.
    func park() {
        busy.store(false, ordering: .releasing)
        while running.load(ordering: .acquiring) { sched_yield() }
    }

    func finish() {
        quit.store(true, ordering: .releasing)
        guard bench_eventfd_post(wake) == 0 else { fatalError("loop-scaling: eventfd write failed, errno \(errno)") }
        pthread_join(thread, nil)
        close(wake)
    }
}


/// Alternates chunks alone and beside a busy neighbour of the same kind on the calling thread.
func measure(_ name: String, rounds: Int, passes: Int, _ makeRunner: @escaping @Sendable () -> PassRunner?) -> PairedChunks {
    let neighbour = Neighbour(makeRunner)
    guard let maker = makeRunner() else { fatalError("loop-scaling: \(name) could not be set up") }
    defer { maker.tearDown() }
    _ = maker.timed(passes, tool: "loop-scaling", name)
    let result = PairedChunks(rounds: rounds, baseline: { maker.timed(passes, tool: "loop-scaling", name) }, measured: {
        neighbour.start()
        defer { neighbour.park() }
        return maker.timed(passes, tool: "loop-scaling", name)
    })
    neighbour.finish()
    let failed = neighbour.failures.load(ordering: .relaxed)
    guard failed == 0 else { fatalError("loop-scaling: \(name)'s neighbour missed callouts \(failed) times") }
    return result
}

let arguments = Array(CommandLine.arguments.dropFirst())
let rounds = arguments.count > 0 ? Int(arguments[0]) ?? 200 : 200
let passes = arguments.count > 1 ? Int(arguments[1]) ?? 20_000 : 20_000

/// The measuring thread: a pthread pinned to CPU 0, so `Loop.current` is a loop of its own
/// thread, not `Loop.main`.
func measureAll(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard bench_pin_current_thread(0) == 0 else { fatalError("loop-scaling: could not pin to CPU 0") }
    var rows: [String] = []
    for (name, maker) in [("Loop", { loopPassRunner() } as @Sendable () -> PassRunner?), ("libuv", libuvPassRunner)] {
        rows.append("| \(name) | \(measure(name, rounds: rounds, passes: passes, maker).tableCells) |")
    }
    print("""
        \(PairedChunks.header("polling pass + 1 callout on CPU 0 (\(PairedChunks.schedule(rounds: rounds, chunksOf: "\(passes) passes")))", baseline: "alone", measured: "beside a busy loop on CPU 1"))
        \(rows.joined(separator: "\n"))
        """)
    return nil
}

var measuring = pthread_t()
let created = pthread_create(&measuring, nil, measureAll, nil)
guard created == 0 else { fatalError("loop-scaling: pthread_create failed: \(created)") }
pthread_join(measuring, nil)
