// RunLoopKit's `Loop` beside its peers, each doing the same work in the same run: CFRunLoop and
// Foundation's RunLoop (swift-corelibs-foundation), libuv and GLib (C, Support/C*Peer) and
// SwiftNIO. Names read "<work> · <implementation>" so the peers of a work sort together.
//
//   polling pass   one non-blocking pass that makes one callout, with 0, 2 and 8 hooks
//                  (observers for every activity beside CFRunLoop's, target ≤ 0.1× CF; and hooks
//                  each called once per pass beside CF, libuv and GLib; 0 mallocs).
//   source         signal + a polling pass that runs it, same thread.
//   due timer      the caller re-arms a timer to "now", then a polling pass fires it; 0 and 2
//                  hooks (target: 2 hooks ≤ 0.8× libuv, issue 31).
//   round trip     thread B posts to loop thread A, whose callout acks over an eventfd B blocks
//                  on; beside raw eventfd ping-pongs through epoll and through a bare read.
//                  Every thread of these is pinned to CPU 0 (targets, judged by
//                  Tools/RoundTripPairs: ≤ 1.0× the fastest of libuv, GLib and the bare floor).
//   executor hop   a task awaits an actor whose executor is the loop, a SwiftNIO event loop or
//                  a serial DispatchQueue (target: ≤ 1.0× NIO; mallocs per job); a job that
//                  comes back from the global executor; a job enqueued from the executor's thread.
//   scale          10,000 idle source0s / fd sources and 100,000 armed timers beside a pass, and
//                  a second loop busy on the other CPU, each against the same work without them
//                  (Scale.swift).
// PollingPass.swift, SourceAndTimer.swift, RoundTrip.swift, ExecutorHop.swift and Scale.swift say
// how each peer does the work.
//
// Every sample runs 1,000 operations (`scalingFactor: .kilo`); set-up and a warm-up stay
// outside the measured span, so the malloc counts are the steady state's. RUNLOOPKIT_BENCH_ORDER
// puts ours first or last among the implementations of each work (Support/BenchOrder).
import BenchOrder
import Benchmark
#if canImport(Glibc)
import Glibc
#endif

/// How long each benchmark may sample: 2 s, or the seconds in RUNLOOPKIT_BENCH_SECONDS (the
/// short CI subset sets it lower).
let maxSampling: Duration = {
    guard let text = getenv("RUNLOOPKIT_BENCH_SECONDS").map({ String(cString: $0) }),
          let seconds = Double(text), seconds > 0 else { return .seconds(2) }
    return .milliseconds(Int(seconds * 1000))
}()

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 3,
        scalingFactor: .kilo,
        maxDuration: maxSampling,
        maxIterations: 100_000
    )
    registerPollingPassBenchmarks()
    registerSourceBenchmarks()
    registerTimerBenchmarks()
    registerRoundTripBenchmarks()
    registerExecutorHopBenchmarks()
    registerScaleBenchmarks()
    applyRunOrder()
}
