// The polling pass on `Loop.main`, which package-benchmark cannot measure: its benchmarks run on
// a thread of Swift's cooperative pool, never on the main thread. This tool runs on the main
// thread and measures, interleaved in each round (same CPU when started under `taskset -c 0`):
//
//   main     Loop.main: perform one block, run the default mode with timeout 0; with 0, 2 and
//            8 observers for every activity (the issue's hook counts: each observer is called
//            4 times in a polling pass, entry, before timers, before sources and exit)
//   main, one callout per hook
//            the same with 2 and 8 observers that are each called once per pass, half on
//            before-timers and half on before-sources: as many hook callouts as libuv makes
//   own      the same on a loop of its own thread, 0 hooks (a pthread that waits while main
//            measures)
//   libuv    libuv's polling pass on the main thread (an idle handle, uv_run(UV_RUN_NOWAIT)),
//            with 0, 2 and 8 hooks (half uv_prepare_t, half uv_check_t)
//   syscall  a bare system call (getppid), what one kernel entry costs on this machine
//
// `main-loop-pass [rounds] [reps] [passes]` prints one markdown table of medians (ns per pass)
// and the ratios: `Loop.main` and libuv alternate which runs first from rep to rep, each rep's
// ratio is taken, and each order's median is shown with the worse one. `main-loop-pass --passes-only N` makes N passes on Loop.main and nothing
// else, for `strace -c` (Scripts/run-main-loop.sh counts its system calls per pass).

import BenchPasses
import CLibuvPeer
import Glibc
import RunLoopCore

/// Makes `passes` polling passes on `loop` (one performed block each); ns per pass. Exits 1
/// unless every pass made its callout.
func loopPasses(_ loop: Loop, _ passes: Int, _ tally: CalloutTally) -> Double {
    let before = tally.count
    let bump: @Sendable () -> Void = { tally.count &+= 1 }
    let start = monotonicNanoseconds()
    for _ in 0..<passes {
        loop.perform(inMode: .default, label: "main-loop-pass", bump)
        loop.run(mode: .default, timeout: 0)
    }
    let elapsed = monotonicNanoseconds() - start
    guard tally.count - before == passes else {
        print("main-loop-pass: \(tally.count - before) callouts in \(passes) passes, expected one per pass")
        exit(1)
    }
    return Double(elapsed) / Double(passes)
}

/// The own-thread measurement: a pthread whose loop makes the passes while main waits in join.
final class OwnThreadRun: @unchecked Sendable {  // written by the pthread before join returns, read by main after
    let passes: Int
    var nanosecondsPerPass = 0.0
    init(passes: Int) { self.passes = passes }
}

func ownThreadBody(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let run = Unmanaged<OwnThreadRun>.fromOpaque(argument!).takeUnretainedValue()
    let tally = CalloutTally()
    _ = loopPasses(Loop.current, 32, tally)
    run.nanosecondsPerPass = loopPasses(Loop.current, run.passes, tally)
    return nil
}

func ownThreadPasses(_ passes: Int) -> Double {
    let run = OwnThreadRun(passes: passes)
    var thread = pthread_t()
    let created = pthread_create(&thread, nil, ownThreadBody, Unmanaged.passUnretained(run).toOpaque())
    guard created == 0 else { fatalError("pthread_create failed: \(created)") }
    let joined = pthread_join(thread, nil)
    guard joined == 0 else { fatalError("pthread_join failed: \(joined)") }
    return run.nanosecondsPerPass
}

func libuvPasses(_ peer: OpaquePointer, _ passes: Int) -> Double {
    let start = monotonicNanoseconds()
    let callouts = bench_uv_passes(peer, passes)
    let elapsed = monotonicNanoseconds() - start
    guard callouts == passes else {
        print("main-loop-pass: libuv made \(callouts) callouts in \(passes) passes")
        exit(1)
    }
    return Double(elapsed) / Double(passes)
}

func bareSystemCalls(_ count: Int) -> Double {
    let start = monotonicNanoseconds()
    for _ in 0..<count { _ = getppid() }
    return Double(monotonicNanoseconds() - start) / Double(count)
}

let arguments = Array(CommandLine.arguments.dropFirst())
let mainTally = CalloutTally()
if arguments.first == "--passes-only" {
    let passes = arguments.count > 1 ? Int(arguments[1]) ?? 10_000 : 10_000
    _ = loopPasses(Loop.main, passes, mainTally)
    exit(0)
}
let rounds = arguments.count > 0 ? Int(arguments[0]) ?? 3 : 3
let reps = arguments.count > 1 ? Int(arguments[1]) ?? 7 : 7
let passes = arguments.count > 2 ? Int(arguments[2]) ?? 100_000 : 100_000

/// The hook counts of the issue's targets: observers for every activity on `Loop.main`, half
/// `uv_prepare_t` and half `uv_check_t` handles on libuv (as in PollingPass.swift).
let hookCounts = [0, 2, 8]
let libuvPeers = hookCounts.map { hooks -> OpaquePointer in
    guard let peer = bench_uv_polling_create(Int32(hooks)) else { fatalError("libuv peer with \(hooks) hooks: set-up failed") }
    _ = libuvPasses(peer, 32)
    return peer
}
_ = loopPasses(Loop.main, 32, mainTally)

/// Makes the passes on `Loop.main` with `hooks` observers for every activity in its default mode.
func mainLoopPasses(hooks: Int, _ passes: Int) -> Double {
    let observers = (0..<hooks).map { _ in LoopObserver(activities: .allActivities, label: "hook") { _, _ in } }
    for observer in observers { Loop.main.add(observer, mode: .default) }
    defer { for observer in observers { Loop.main.remove(observer, mode: .default) } }
    return loopPasses(Loop.main, passes, mainTally)
}

/// Makes the passes on `Loop.main` with `hooks` observers that are each called once per
/// pass, half before the timers and half before the sources (libuv's half prepare, half check).
/// Exits 1 unless every observer was called exactly once per pass.
func mainLoopPassesOneCalloutPerHook(hooks: Int, _ passes: Int) -> Double {
    let hookTally = CalloutTally()
    let observers = (0..<hooks).map { index in
        LoopObserver(activities: index % 2 == 0 ? .beforeTimers : .beforeSources, label: "hook") { _, _ in
            hookTally.count &+= 1
        }
    }
    for observer in observers { Loop.main.add(observer, mode: .default) }
    defer { for observer in observers { Loop.main.remove(observer, mode: .default) } }
    let result = loopPasses(Loop.main, passes, mainTally)
    guard hookTally.count == hooks * passes else {
        print("main-loop-pass: \(hookTally.count) hook callouts in \(passes) passes with \(hooks) hooks, expected one per hook per pass")
        exit(1)
    }
    return result
}
let oneCalloutHookCounts = [2, 8]

var samples: [String: [Double]] = ["own": [], "syscall": []]
/// The ratio of each rep, keyed "<row> <order>": main ÷ libuv measured in the same rep, main
/// first in even reps and libuv first in odd ones.
var repRatios: [String: [Double]] = [:]
for _ in 0..<rounds {
    for rep in 0..<reps {
        let mainFirst = rep % 2 == 0
        let order = mainFirst ? "main first" : "libuv first"
        for (index, hooks) in hookCounts.enumerated() {
            var main = 0.0, peer = 0.0, once = 0.0
            let measureMain = {
                main = mainLoopPasses(hooks: hooks, passes)
                if oneCalloutHookCounts.contains(hooks) { once = mainLoopPassesOneCalloutPerHook(hooks: hooks, passes) }
            }
            if mainFirst {
                measureMain()
                peer = libuvPasses(libuvPeers[index], passes)
            } else {
                peer = libuvPasses(libuvPeers[index], passes)
                measureMain()
            }
            samples["main \(hooks)", default: []].append(main)
            samples["libuv \(hooks)", default: []].append(peer)
            repRatios["main \(hooks) \(order)", default: []].append(main / peer)
            if oneCalloutHookCounts.contains(hooks) {
                samples["main once \(hooks)", default: []].append(once)
                repRatios["main once \(hooks) \(order)", default: []].append(once / peer)
            }
        }
        samples["own"]!.append(ownThreadPasses(passes))
        samples["syscall"]!.append(bareSystemCalls(passes))
    }
}
for peer in libuvPeers { bench_uv_destroy(peer) }

/// "worse× (main first / libuv first)": each order's median ratio, the worse one first.
@MainActor func orderCells(_ row: String) -> String {
    let mainFirst = median(repRatios["\(row) main first"] ?? [.nan])
    let libuvFirst = median(repRatios["\(row) libuv first"] ?? [.nan])
    return "\(ratioText(max(mainFirst, libuvFirst))) (\(ratioText(mainFirst)) / \(ratioText(libuvFirst)))"
}

let own = median(samples["own"]!), syscallCost = median(samples["syscall"]!)
let uv = median(samples["libuv 0"]!)
var rows: [String] = []
for hooks in hookCounts {
    let main = median(samples["main \(hooks)"]!), peer = median(samples["libuv \(hooks)"]!)
    rows.append("| polling pass + 1 callout, `Loop.main`, \(hooks) hooks | \(nanosecondsText(main)) | \(nanosecondsText(peer)) | \(orderCells("main \(hooks)")) |")
}
for hooks in oneCalloutHookCounts {
    let main = median(samples["main once \(hooks)"]!), peer = median(samples["libuv \(hooks)"]!)
    rows.append("| polling pass + 1 callout, `Loop.main`, \(hooks) hooks called once per pass (as libuv's) | \(nanosecondsText(main)) | \(nanosecondsText(peer)) | \(orderCells("main once \(hooks)")) |")
}
print("""
    | work (median of \(rounds) rounds × \(reps) reps, \(passes) passes each; `Loop.main` first in even reps, libuv first in odd ones) | ns per pass | libuv with as many hooks, ns | ÷ libuv: worse order (main first / libuv first) |
    |---|---:|---:|---:|
    \(rows.joined(separator: "\n"))
    | polling pass + 1 callout, a loop of its own thread, 0 hooks | \(nanosecondsText(own)) | \(nanosecondsText(uv)) | \(ratioText(own / uv)) (not paired) |
    | one bare system call (`getppid`) | \(nanosecondsText(syscallCost)) | \(nanosecondsText(uv)) | \(ratioText(syscallCost / uv)) (not paired) |
    """)
