// The package-benchmark rows that compare two passes made on one thread, timed in pairs:
//
//   against CFRunLoop  the polling pass + 1 callout with 0, 2 and 8 observers for every
//                      activity, on a loop and on CFRunLoop (issue 12: ≤ 0.1× CF);
//   idle items         the same pass on a loop in a mode that also holds 10,000 idle source0s,
//                      10,000 idle fd sources or 100,000 armed timers, against the pass in a
//                      mode without them (with one fd source, one armed timer), and a due timer
//                      firing beside the 100,000 timers against alone (issue 12, item 4: ≤ 1.1×).
//
// package-benchmark times each side in a process of its own, seconds apart, and this VM's vCPU
// runs about 40% slower for seconds at a time (Tools/LoopScaling/main.swift): its rows read
// either side in either speed, and the worse of its two orders often caught the loop slow. Here
// the two sides' chunks alternate strictly, milliseconds apart, on one thread pinned to CPU 0,
// the peer's first and last; each row reports both orders' medians of the per-pair ratios and
// the worse order's (Support/BenchPasses/PairedChunks.swift). Every chunk traps unless each
// pass made its one callout (and every hook ran at each activity).
//
// The idle items' modes and the modes without them are modes of one loop, so both sides share
// the loop and the process: each mode has its own epoll set and timer queue, so a pass in one
// mode does not look at another mode's items, but the caches hold what either side touched last.
//
//   pass-pairs [rounds] [loop passes per chunk]   (default 200 rounds; 20,000 loop passes and
//                                                  2,000 CFRunLoop passes a chunk)

import BenchPasses
import CBenchSupport
import CFPasses
import Glibc
import RunLoopCore

let arguments = Array(CommandLine.arguments.dropFirst())
let rounds = arguments.count > 0 ? Int(arguments[0]) ?? 200 : 200
let passes = arguments.count > 1 ? Int(arguments[1]) ?? 20_000 : 20_000
/// CFRunLoop's pass is about ten times the loop's: a tenth of the passes keeps its chunks as short.
let cfPasses = max(1, passes / 10)

/// The paired chunks of `baseline` and `measured`, after a warm-up chunk of each.
func pairChunks(baseline: PassRunner, _ baselineName: String, baselinePasses: Int,
                measured: PassRunner, _ measuredName: String) -> PairedChunks {
    _ = baseline.timed(baselinePasses / 10 + 1, tool: "pass-pairs", baselineName)
    _ = measured.timed(passes / 10 + 1, tool: "pass-pairs", measuredName)
    return PairedChunks(rounds: rounds, baseline: { baseline.timed(baselinePasses, tool: "pass-pairs", baselineName) },
                        measured: { measured.timed(passes, tool: "pass-pairs", measuredName) })
}

/// The rows against CFRunLoop: 0, 2 and 8 observers for every activity on both sides.
func againstCFRunLoop() -> String {
    var rows: [String] = []
    for hooks in [0, 2, 8] {
        guard let loop = loopPassRunner(hooks: hooks) else { fatalError("pass-pairs: loop set-up failed") }
        let cf = cfPassRunner(hooks: hooks)
        let pairs = pairChunks(baseline: cf, "CFRunLoop", baselinePasses: cfPasses, measured: loop, "Loop")
        loop.tearDown()
        cf.tearDown()
        rows.append("| polling pass + 1 callout, \(hooks) hooks: Loop ÷ CFRunLoop | \(pairs.tableCells) |")
    }
    return PairedChunks.header("work, one thread on CPU 0 (\(rounds + 1) chunks of \(cfPasses) CFRunLoop passes alternating with \(rounds) of \(passes) loop passes; hooks: observers for every activity)",
                               baseline: "CFRunLoop", measured: "Loop") + "\n" + rows.joined(separator: "\n")
}

/// A loop of the calling thread whose passes in `mode` fire the always-due timer there.
func dueTimerRunner(mode: Loop.Mode, tally: CalloutTally) -> PassRunner {
    let loop = Loop.current
    return PassRunner(run: { count in
        let before = tally.count
        for _ in 0..<count { loop.run(mode: mode, timeout: 0) }
        return tally.count - before
    }, tearDown: {})
}

/// The rows of idle items: each pass beside the items against the same pass beside none (or one).
func idleItems() -> String {
    let loop = Loop.current
    let stray = CalloutTally()
    let countStray: @Sendable () -> Void = { stray.count &+= 1 }
    var kept: [AnyObject] = []   // the items stay in their modes until the process ends
    func passRunner(_ mode: String) -> PassRunner {
        guard let runner = loopPassRunner(mode: Loop.Mode(mode)) else { fatalError("pass-pairs: loop set-up failed") }
        return runner
    }
    var rows: [String] = []
    func row(_ work: String, _ baselineName: String, baseline: PassRunner, measured: PassRunner) {
        let pairs = pairChunks(baseline: baseline, baselineName, baselinePasses: passes, measured: measured, work)
        rows.append("| \(work) | \(pairs.tableCells) |")
    }

    kept += addIdleSources0(idleSources0Count, to: loop, mode: Loop.Mode("idle source0s"), stray: countStray) as [AnyObject]
    row("polling pass + 1 callout, 10,000 idle source0s in the mode ÷ none", "none",
        baseline: passRunner("no items"), measured: passRunner("idle source0s"))

    let files = addIdleFileSources(idleFileSourcesCount, to: loop, mode: Loop.Mode("idle fd sources"), stray: countStray)
    guard files.refused == 0 else {
        fatalError("pass-pairs: \(files.refused) of \(idleFileSourcesCount) idle fd sources could not be made or added (ulimit -n?)")
    }
    let oneFile = addIdleFileSources(1, to: loop, mode: Loop.Mode("one fd source"), stray: countStray)
    guard oneFile.refused == 0 else { fatalError("pass-pairs: the one idle fd source could not be added") }
    kept += files.sources as [AnyObject] + oneFile.sources as [AnyObject]
    row("polling pass + 1 callout, 10,000 idle fd sources in the mode ÷ 1", "1 fd source",
        baseline: passRunner("one fd source"), measured: passRunner("idle fd sources"))

    kept += armIdleTimers(armedTimersCount, on: loop, mode: Loop.Mode("armed timers"), stray: countStray) as [AnyObject]
    kept += armIdleTimers(1, on: loop, mode: Loop.Mode("one armed timer"), stray: countStray) as [AnyObject]
    row("polling pass + 1 callout, 100,000 armed timers in the mode ÷ 1", "1 armed timer",
        baseline: passRunner("one armed timer"), measured: passRunner("armed timers"))

    let fired = CalloutTally()
    let fire: @Sendable () -> Void = { fired.count &+= 1 }
    kept += armIdleTimers(armedTimersCount, on: loop, mode: Loop.Mode("due beside armed"), stray: countStray) as [AnyObject]
    guard let besideArmed = addAlwaysDueTimer(to: loop, mode: Loop.Mode("due beside armed"), fire: fire),
          let alone = addAlwaysDueTimer(to: loop, mode: Loop.Mode("due alone"), fire: fire) else {
        fatalError("pass-pairs: the due timers could not be made")
    }
    kept += [besideArmed, alone]
    row("due timer fires, 100,000 armed timers in the mode ÷ none", "none",
        baseline: dueTimerRunner(mode: Loop.Mode("due alone"), tally: fired),
        measured: dueTimerRunner(mode: Loop.Mode("due beside armed"), tally: fired))

    guard stray.count == 0 else { fatalError("pass-pairs: \(stray.count) idle items made callouts") }
    withExtendedLifetime(kept) {}
    return PairedChunks.header("work, one thread on CPU 0 (\(PairedChunks.schedule(rounds: rounds, chunksOf: "\(passes) passes")))",
                               baseline: "without them", measured: "with them") + "\n" + rows.joined(separator: "\n")
}

/// The fd sources need more descriptors than a default soft limit may allow: up to the hard one.
func raiseDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { fatalError("pass-pairs: getrlimit failed, errno \(errno)") }
    limit.rlim_cur = limit.rlim_max
    guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { fatalError("pass-pairs: setrlimit failed, errno \(errno)") }
}

/// The measuring thread: a pthread pinned to CPU 0, so `Loop.current` is a loop of its own
/// thread, not `Loop.main`.
func measureAll(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard bench_pin_current_thread(0) == 0 else { fatalError("pass-pairs: could not pin to CPU 0") }
    print(againstCFRunLoop())
    print()
    print(idleItems())
    return nil
}

raiseDescriptorLimit()
var measuring = pthread_t()
let created = pthread_create(&measuring, nil, measureAll, nil)
guard created == 0 else { fatalError("pass-pairs: pthread_create failed: \(created)") }
pthread_join(measuring, nil)
