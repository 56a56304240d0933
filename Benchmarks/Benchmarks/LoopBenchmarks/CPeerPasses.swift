import Benchmark

/// Measures a C peer's single-thread passes: `create` before the measured span, `passes(n)`
/// (which returns the callouts it made) for the warm-up and for the measured span, `destroy`
/// after it. Fails the benchmark unless every measured pass made exactly one callout and
/// `hooksPerPass` hook calls (`hookCalls` reads the last `passes` call's count).
func measureCPasses<Peer>(
    _ benchmark: Benchmark,
    _ what: String,
    hooksPerPass: Int = 0,
    create: () -> Peer?,
    passes: (Peer, Int) -> Int,
    hookCalls: ((Peer) -> Int)? = nil,
    destroy: (Peer) -> Void
) {
    guard let peer = create() else {
        benchmark.error("\(what): set-up failed")
        return
    }
    defer { destroy(peer) }
    _ = passes(peer, warmUpPasses)
    let expected = benchmark.scaledIterations.count
    benchmark.startMeasurement()
    let callouts = passes(peer, expected)
    benchmark.stopMeasurement()
    if callouts != expected {
        benchmark.error("\(what): \(callouts) callouts in \(expected) passes, expected one per pass")
    }
    if let hookCalls, hookCalls(peer) != expected * hooksPerPass {
        benchmark.error("\(what): \(hookCalls(peer)) hook calls in \(expected) passes, expected \(hooksPerPass) per pass")
    }
}
