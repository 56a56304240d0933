// The polling pass + 1 callout on a loop of the calling thread and on libuv's peer, as the
// benchmark targets and the tools beside them run it, with each pass's callout counted.

import CLibuvPeer
import RunLoopCore

/// Callouts made by one loop's measured blocks, which run on that loop's thread only.
/// `@exclusivity(unchecked)`: the count is the harness's, not the work, and Swift's run-time
/// exclusivity check on each access (about 5 ns) would land on the Swift side of a pair only.
public final class CalloutTally: @unchecked Sendable {  // touched by one thread at a time: the loop's, or a reader after it joined
    @exclusivity(unchecked) public var count = 0
    public init() {}
}

/// One thread's passes: `run(n)` makes n passes and returns the callouts they made.
public struct PassRunner {
    public let run: (Int) -> Int
    public let tearDown: () -> Void

    public init(run: @escaping (Int) -> Int, tearDown: @escaping () -> Void) {
        self.run = run
        self.tearDown = tearDown
    }
}

extension PassRunner {
    /// Nanoseconds per pass of `count` passes; traps, naming `tool` and `name`, unless each
    /// pass made one callout.
    public func timed(_ count: Int, tool: String, _ name: String) -> Double {
        let start = monotonicNanoseconds()
        let callouts = run(count)
        let elapsed = monotonicNanoseconds() - start
        guard callouts == count else { fatalError("\(tool): \(name) made \(callouts) callouts in \(count) passes") }
        return Double(elapsed) / Double(count)
    }
}

/// A loop of the calling thread, each pass in `mode` performing one block (made once: no
/// context per pass), with `hooks` observers for every activity in that mode; `run(n)` traps
/// unless every hook ran 4 times a pass (entry, before timers, before sources, exit).
public func loopPassRunner(hooks: Int = 0, mode: Loop.Mode = .default) -> PassRunner? {
    let loop = Loop.current
    let tally = CalloutTally(), hookTally = CalloutTally()
    let bump: @Sendable () -> Void = { tally.count &+= 1 }
    let observers = installLoopHooks(hooks, oncePerPass: false, on: loop, mode: mode) { hookTally.count &+= 1 }
    return PassRunner(run: { passes in
        let before = tally.count, hooksBefore = hookTally.count
        for _ in 0..<passes {
            loop.perform(inMode: mode, label: "bench", bump)
            loop.run(mode: mode, timeout: 0)
        }
        precondition(hookTally.count - hooksBefore == 4 * hooks * passes, "Loop polling pass: a hook missed a pass")
        return tally.count - before
    }, tearDown: { removeLoopHooks(observers, from: loop, mode: mode) })
}

/// A libuv loop of the calling thread with an idle handle and no hooks (the polling pass peer).
public func libuvPassRunner() -> PassRunner? {
    guard let peer = bench_uv_polling_create(0) else { return nil }
    return PassRunner(run: { Int(bench_uv_passes(peer, $0)) }, tearDown: { bench_uv_destroy(peer) })
}
