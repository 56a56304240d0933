// The idle items of the scale works (issue 12, item 4: idle items add ≤ 10% to a pass), as the
// scale benchmarks and pass-pairs add them: source0s never signalled, fd sources on eventfds
// never written, and timers armed an hour or more ahead. Each item's callout runs `stray`,
// which a caller counts as a callout its pass did not ask for.

import CBenchSupport
import RunLoopCore

/// The sizes the issue asks for.
public let idleSources0Count = 10_000
public let idleFileSourcesCount = 10_000
public let armedTimersCount = 100_000

/// Adds `count` source0s, never signalled, to `mode` of `loop`, spread over 7 orders.
public func addIdleSources0(_ count: Int, to loop: Loop, mode: Loop.Mode,
                            stray: @escaping @Sendable () -> Void) -> [LoopSource] {
    (0..<count).map { index in
        let source = LoopSource(order: index % 7, label: "idle") { stray() }
        loop.add(source, mode: mode)
        return source
    }
}

/// Adds `count` fd sources on eventfds never written (never readable) to `mode` of `loop`.
/// Returns the sources added, and how many could not be made or added (`ulimit -n`). The
/// eventfds stay open for the process's lifetime, as the sources do.
public func addIdleFileSources(_ count: Int, to loop: Loop, mode: Loop.Mode,
                               stray: @escaping @Sendable () -> Void) -> (sources: [LoopFileSource], refused: Int) {
    var sources: [LoopFileSource] = [], refused = 0
    for _ in 0..<count {
        let fd = bench_eventfd()
        guard fd >= 0 else { refused += 1; continue }
        let source = LoopFileSource(fd: fd, events: .readable, label: "idle") { _ in stray() }
        if loop.add(source, mode: mode) == .added { sources.append(source) } else { refused += 1 }
    }
    return (sources, refused)
}

/// Adds `count` timers due an hour or more from now, spread over a minute, to `mode` of `loop`.
public func armIdleTimers(_ count: Int, on loop: Loop, mode: Loop.Mode,
                          stray: @escaping @Sendable () -> Void) -> [LoopTimer] {
    (0..<count).compactMap { index in
        guard let timer = try? LoopTimer(after: .seconds(3600) + .microseconds(index * 600), clock: loop.clock,
                                         label: "armed", { _ in stray() }) else { return nil }
        loop.add(timer, mode: mode)
        return timer
    }
}

/// A repeating timer whose 1 ns interval makes it due again on every pass, in `mode` of `loop`:
/// the scale works compare the loop with itself, so the library's own re-arm is the same work on
/// both sides of a ratio.
public func addAlwaysDueTimer(to loop: Loop, mode: Loop.Mode, fire: @escaping @Sendable () -> Void) -> LoopTimer? {
    guard let timer = try? LoopTimer(fireAt: loop.clock.now, interval: 1e-9, label: "bench", { _ in fire() }) else {
        return nil
    }
    loop.add(timer, mode: mode)
    return timer
}
