// The polling pass + 1 callout on a loop of the calling thread and on libuv's peer, as the
// benchmark targets and the tools beside them run it, with each pass's callout counted.

import CLibuvPeer
import RunLoopCore

/// Callouts made by one loop's measured blocks, which run on that loop's thread only.
public final class CalloutTally: @unchecked Sendable {  // touched by one thread at a time: the loop's, or a reader after it joined
    public var count = 0
    public init() {}
}

/// One thread's passes: `run(n)` makes n passes and returns the callouts they made.
public struct PassRunner {
    public let run: (Int) -> Int
    public let tearDown: () -> Void
}

/// A loop of the calling thread, each pass performing one block (made once: no context per pass).
public func loopPassRunner() -> PassRunner? {
    let loop = Loop.current
    let tally = CalloutTally()
    let bump: @Sendable () -> Void = { tally.count &+= 1 }
    return PassRunner(run: { passes in
        let before = tally.count
        for _ in 0..<passes {
            loop.perform(inMode: .default, label: "bench", bump)
            loop.run(mode: .default, timeout: 0)
        }
        return tally.count - before
    }, tearDown: {})
}

/// A libuv loop of the calling thread with an idle handle and no hooks (the polling pass peer).
public func libuvPassRunner() -> PassRunner? {
    guard let peer = bench_uv_polling_create(0) else { return nil }
    return PassRunner(run: { Int(bench_uv_passes(peer, $0)) }, tearDown: { bench_uv_destroy(peer) })
}
