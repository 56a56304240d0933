import Benchmark

/// Counts the callouts of the single-thread benchmarks. A global, so the callout closures
/// capture nothing: a capture would add a context allocation to both sides of a comparison.
/// Only the benchmark runner's thread touches it.
nonisolated(unsafe) var calloutCount = 0

/// Passes run before the measured span, so first-use growth of buffers is not counted.
let warmUpPasses = 32

/// Runs `pass` `warmUpPasses` times, then `benchmark.scaledIterations` times inside the measured
/// span, and fails the benchmark unless every measured pass made exactly one callout.
func measurePasses(_ benchmark: Benchmark, _ what: String, _ pass: () -> Void) {
    for _ in 0..<warmUpPasses { pass() }
    calloutCount = 0
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations { pass() }
    benchmark.stopMeasurement()
    let expected = benchmark.scaledIterations.count
    if calloutCount != expected {
        benchmark.error("\(what): \(calloutCount) callouts in \(expected) passes, expected one per pass")
    }
}
