// The due timer re-armed by the caller (issue 31), on a loop of the calling thread and on
// libuv's peer, as LoopBenchmarks/SourceAndTimer.swift runs it: before each pass the caller
// makes the timer due now without reading the clock, then one non-blocking pass fires it, with
// `hooks` hooks each called once per pass (half before-timers, half before-sources observers;
// half uv_prepare_t, half uv_check_t). `run(n)` returns the callouts, and traps unless every
// hook ran once per pass.

import CLibuvPeer
import RunLoopCore

/// A loop of the calling thread with a repeating timer (interval one hour: only the caller's
/// re-arm makes it due), re-armed with `setNextFireDate` to a date taken at set-up.
public func loopDueTimerRunner(hooks: Int) -> PassRunner? {
    let loop = Loop.current
    let tally = CalloutTally(), hookTally = CalloutTally()
    let pastDate = loop.clock.now
    guard let timer = try? LoopTimer(fireAt: pastDate, interval: 3600, label: "bench", { _ in tally.count &+= 1 }) else {
        return nil
    }
    loop.add(timer, mode: .default)
    let observers = installLoopHooks(hooks, oncePerPass: true, on: loop) { hookTally.count &+= 1 }
    return PassRunner(run: { passes in
        let before = tally.count, hooksBefore = hookTally.count
        for _ in 0..<passes {
            timer.setNextFireDate(pastDate)
            loop.run(mode: .default, timeout: 0)
        }
        precondition(hookTally.count - hooksBefore == hooks * passes, "due timer: a hook missed a pass")
        return tally.count - before
    }, tearDown: {
        removeLoopHooks(observers, from: loop)
        loop.remove(timer, mode: .default)
        timer.invalidate()
    })
}

/// libuv's peer: `uv_timer_start(timer, cb, 0, 0)` before each `uv_run(UV_RUN_NOWAIT)`.
public func libuvDueTimerRunner(hooks: Int) -> PassRunner? {
    guard let peer = bench_uv_timer_create(Int32(hooks)) else { return nil }
    return PassRunner(run: { passes in
        let callouts = Int(bench_uv_passes(peer, passes))
        precondition(bench_uv_hook_calls(peer) == hooks * passes, "libuv due timer: a hook missed a pass")
        return callouts
    }, tearDown: { bench_uv_destroy(peer) })
}
