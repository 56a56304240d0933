import Benchmark
import RunLoopCore

/// Counts the callouts of the single-thread benchmarks. A global, so the callout closures
/// capture nothing: a capture would add a context allocation to both sides of a comparison.
/// Only the benchmark runner's thread touches it. `@exclusivity(unchecked)`: the count is the
/// harness's, not the work, and Swift's run-time exclusivity check on each access (about 5 ns)
/// would land on the Swift sides only, the C peers counting with a plain add.
@exclusivity(unchecked) nonisolated(unsafe) var calloutCount = 0
/// Counts the hook callouts (observers) of the same benchmarks, for the same reasons a global
/// and unchecked.
@exclusivity(unchecked) nonisolated(unsafe) var hookCount = 0

/// Passes run before the measured span, so first-use growth of buffers is not counted.
let warmUpPasses = 32

/// Runs `pass` `warmUpPasses` times, then `benchmark.scaledIterations` times inside the measured
/// span, and fails the benchmark unless every measured pass made exactly one callout and
/// `hooksPerPass` hook callouts.
func measurePasses(_ benchmark: Benchmark, _ what: String, hooksPerPass: Int = -1, _ pass: () -> Void) {
    for _ in 0..<warmUpPasses { pass() }
    calloutCount = 0
    hookCount = 0
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations { pass() }
    benchmark.stopMeasurement()
    let expected = benchmark.scaledIterations.count
    if calloutCount != expected {
        benchmark.error("\(what): \(calloutCount) callouts in \(expected) passes, expected one per pass")
    }
    if hooksPerPass >= 0 && hookCount != expected * hooksPerPass {
        benchmark.error("\(what): \(hookCount) hook callouts in \(expected) passes, expected \(hooksPerPass) per pass")
    }
}

