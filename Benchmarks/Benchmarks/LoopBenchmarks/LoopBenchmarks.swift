// RunLoopKit's `Loop` beside the real CFRunLoop (swift-corelibs-foundation), each pair doing the
// same work in the same run. Names read "<work> · <implementation>" so the pairs sort together.
//
//   polling pass   run(mode: .default, timeout: 0) that runs one performed block, with 0, 2 and
//                  8 observers for all activities (target: ≤ 0.1× CF, 0 mallocs per pass).
//   source0        signal + a polling pass that performs it, same thread.
//   due timer      a repeating timer that is due on every pass, fired by a polling pass.
//   round trip     thread B signals a source and wakes the loop thread, whose perform acks over
//                  an eventfd B blocks on; beside a raw eventfd ping-pong through epoll. Every
//                  thread of these is pinned to CPU 0 (target: ≤ 1.15× the raw floor).
//
// Every sample runs 1,000 operations (`scalingFactor: .kilo`); set-up and a warm-up stay
// outside the measured span, so the malloc counts are the steady state's.
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
}
