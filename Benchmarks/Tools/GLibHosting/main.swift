// GLib hosting the main thread's work (issue 30, items 2 and 8): how long a `@MainActor` job
// enqueued from another thread waits while the main thread runs GLib's main loop, and how often
// an idle GLib main loop wakes up, for each way of getting main-thread work done under GLib:
//
//   hosted    RunLoopKitGLib: GLib's default context drives Loop.main
//             (`GLibMainContext.host(Loop.main)`); the job is `Task { @MainActor in … }`.
//   tickler   swift-cross-ui's `GtkBackend.mainRunLoopTicklingLoop` (its fix for
//             swift-cross-ui #140): a GLib timeout that runs one pass of Foundation's main run
//             loop (`RunLoop.main.limitDate(forMode: .default)`, which drains the main dispatch
//             queue where `@MainActor` jobs wait) and re-arms itself after min(time to the run
//             loop's next timer, 50 ms). The job is `Task { @MainActor in … }`.
//   invoke    GLib's own cross-thread call, `g_main_context_invoke` on the default context: the
//             job is a C function (no Swift concurrency involved).
//
// All are measured in one process, one after the other, in the order given; the script runs
// several orders. The main thread and the sender share CPU 0 (`taskset -c 0`), as the loop's
// other cross-thread benchmarks do.
//
// Hops: the sender waits a pseudo-random 0–50 ms (fixed seed, the same sequence for every mode),
// notes the time, enqueues the job and waits for its acknowledgement; the job notes the time it
// runs. Idle: the main loop runs `idle seconds` with nothing to do; the main thread's voluntary
// context switches and GLib's polls with a non-zero timeout are counted over that time (from
// 0.1 s after the start, read by another thread before it quits the loop).
//
// Passes (`--passes N`, 0: skipped): the cost of one polling pass that makes one callout, equal
// work from the caller's side, in the order given by `--pass-order`:
//   hosted    a loop hosted in a GLib context: perform a block, one GLib iteration that does not
//             block (the loop's pass runs in the GSource's prepare);
//   glib      GLib's own: one iteration of a context whose idle source is the callout;
//   native    the loop's own: perform a block, `run(mode:timeout: 0)`.
//
//   glib-hosting [--hops N] [--idle-seconds S] [--order hosted,tickler,invoke]
//                [--passes N] [--pass-order hosted,glib,native]

import BenchPasses
import CBenchSupport
import CGLibHostingPeer
import CGLibPeer
import Foundation
import RunLoopCore
import RunLoopKitGLib
import Synchronization

struct Options {
    var hops = 200
    var idleSeconds = 10
    var order = ["hosted", "tickler", "invoke"]
    var passes = 0
    var passOrder = ["hosted", "glib", "native"]

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { fatalError("glib-hosting: \(flag) needs a value") }
            switch flag {
            case "--hops": hops = Int(value) ?? hops
            case "--idle-seconds": idleSeconds = Int(value) ?? idleSeconds
            case "--order": order = value.split(separator: ",").map(String.init)
            case "--passes": passes = Int(value) ?? passes
            case "--pass-order": passOrder = value.split(separator: ",").map(String.init)
            default: fatalError("glib-hosting: unknown option \(flag)")
            }
        }
    }
}

/// Where the job writes the time it ran and acknowledges; shared by the sender and the main
/// thread.
final class HopSlot: Sendable {
    let ranAt = Atomic<UInt64>(0)
    let ack = bench_eventfd()

    func jobRan() {
        ranAt.store(monotonicNanoseconds(), ordering: .releasing)
        _ = bench_eventfd_post(ack)
    }
}

/// One mode: how to set it up on the main thread before GLib's loop runs, how to enqueue a
/// job from the sender, how to tear it down after the loop returns.
struct Mode: @unchecked Sendable {
    // Sendable: `enqueue` is called from the sender thread and only enqueues; the other two run
    // on the main thread.
    let name: String
    let setUp: () -> Void
    let enqueue: (HopSlot) -> Void
    let tearDown: () -> Void
}

/// The C function g_main_context_invoke runs.
enum InvokedJob {
    static let function: @convention(c) (UnsafeMutableRawPointer?) -> Void = { slot in
        Unmanaged<HopSlot>.fromOpaque(slot!).takeUnretainedValue().jobRan()
    }
}

/// The hosted mode's bridge, set up and torn down on the main thread.
final class HostedBridge: @unchecked Sendable {
    // Sendable: only the main thread touches `bridge` (setUp and tearDown run there).
    var bridge: LoopOnGLibContext?
}
let hostedBridge = HostedBridge()

func mode(named name: String) -> Mode {
    switch name {
    case "hosted":
        return Mode(name: "hosted (RunLoopKitGLib): GLib drives Loop.main", setUp: {
            do {
                hostedBridge.bridge = try GLibMainContext.defaultContext().host(Loop.main)
            } catch {
                fatalError("glib-hosting: \(error)")
            }
        }, enqueue: { slot in
            Task { @MainActor in slot.jobRan() }
        }, tearDown: {
            hostedBridge.bridge?.end()
            hostedBridge.bridge = nil
        })
    case "tickler":
        return Mode(name: "tickler (swift-cross-ui): RunLoop.main pass every ≤ 50 ms", setUp: {
            hosting_tickler_start(50) {
                // One pass of Foundation's main run loop, then the delay swift-cross-ui computes.
                let next = RunLoop.main.limitDate(forMode: .default)
                return Int32(next.map { max(min(Int($0.timeIntervalSinceNow * 1000), 50), 0) } ?? 50)
            }
        }, enqueue: { slot in
            Task { @MainActor in slot.jobRan() }
        }, tearDown: {
            hosting_tickler_stop()
        })
    case "invoke":
        return Mode(name: "g_main_context_invoke (GLib's own)", setUp: {}, enqueue: { slot in
            hosting_invoke(InvokedJob.function, Unmanaged.passUnretained(slot).toOpaque())
        }, tearDown: {})
    default:
        fatalError("glib-hosting: unknown mode \(name)")
    }
}

/// The main thread's voluntary context switches so far (each return from a blocking wait).
func mainThreadVoluntarySwitches() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/task/\(getpid())/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
    return line.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? -1
}

/// `nanoseconds` in µs below a millisecond, else in ms.
func durationText(_ nanoseconds: Double) -> String {
    nanoseconds < 1_000_000 ? String(format: "%.0f µs", nanoseconds / 1000) : String(format: "%.1f ms", nanoseconds / 1_000_000)
}

func loadAverage() -> String {
    ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(3).joined(separator: " ")
}

/// A fixed pseudo-random sequence of delays in microseconds, 0–50 ms.
struct Delays {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    mutating func next() -> UInt32 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt32((state >> 33) % 50_000)
    }
}

/// Hop latencies in nanoseconds, the sender on its own thread, GLib's loop on the main thread.
func hops(_ mode: Mode, count: Int) -> [Double] {
    let slot = HopSlot()
    let latencies = Mutex<[Double]>([])
    mode.setUp()
    let sender = PinnedThread(cpu: roundTripCPU) {
        var delays = Delays()
        for _ in 0..<count {
            usleep(delays.next())
            let sent = monotonicNanoseconds()
            mode.enqueue(slot)
            guard bench_eventfd_wait(slot.ack) > 0 else { fatalError("glib-hosting: the acknowledgement failed") }
            let ran = slot.ranAt.load(ordering: .acquiring)
            latencies.withLock { $0.append(Double(ran &- sent)) }
        }
        hosting_glib_quit()
    }
    hosting_glib_run()
    sender.join()
    mode.tearDown()
    return latencies.withLock { $0 }
}

/// Wake-ups of an idle GLib loop in `seconds`: the main thread's voluntary switches and GLib's
/// blocking polls.
/// The wake-up that quits the loop at the end is not counted: the counts are read before it.
func idleWakeUps(_ mode: Mode, seconds: Int) -> (switches: Int, polls: Int) {
    mode.setUp()
    let counted = Mutex<(switches: Int, polls: Int)>((0, 0))
    let timer = PinnedThread(cpu: roundTripCPU) {
        // The main thread is in GLib's loop by now (its set-up made no blocking call).
        usleep(100_000)
        let switches = mainThreadVoluntarySwitches(), polls = hosting_blocking_polls()
        sleep(UInt32(seconds))
        counted.withLock { $0 = (mainThreadVoluntarySwitches() - switches, hosting_blocking_polls() - polls) }
        hosting_glib_quit()
    }
    hosting_glib_run()
    timer.join()
    mode.tearDown()
    return counted.withLock { $0 }
}

/// Nanoseconds per polling pass of `kind`: the median of `chunks` chunks of `passes / chunks`.
func passCost(_ kind: String, passes: Int) -> Double {
    let chunks = 21
    let perChunk = max(passes / chunks, 1)
    var samples: [Double] = []
    func measure(_ body: () -> Void) {
        body()   // warm-up chunk
        for _ in 0..<chunks {
            let start = monotonicNanoseconds()
            body()
            samples.append(Double(monotonicNanoseconds() &- start) / Double(perChunk))
        }
    }
    var callouts = 0
    // The blocks run on this thread; a relaxed atomic satisfies the performed block's Sendable.
    let performed = Atomic<Int>(0)
    switch kind {
    case "hosted", "native":
        let loop = Loop(clock: MonotonicClock.shared)
        let keeper = LoopSource(label: "keeps the mode") {}
        loop.add(keeper, mode: .default)
        if kind == "hosted" {
            do {
                let context = try GLibMainContext()
                let bridge = try context.host(loop)
                measure {
                    for _ in 0..<perChunk {
                        loop.perform(inMode: .default, label: "bench") { performed.add(1, ordering: .relaxed) }
                        hosting_iterate(UnsafeMutableRawPointer(context.pointer), 1)
                    }
                }
                bridge.end()
            } catch {
                fatalError("glib-hosting: \(error)")
            }
        } else {
            measure {
                for _ in 0..<perChunk {
                    loop.perform(inMode: .default, label: "bench") { performed.add(1, ordering: .relaxed) }
                    loop.run(mode: .default, timeout: .zero)
                }
            }
        }
        keeper.invalidate()
        loop.tearDown()
        callouts = performed.load(ordering: .relaxed)
    case "glib":
        guard let peer = bench_glib_polling_create(0) else { fatalError("glib-hosting: GLib peer") }
        measure { callouts &+= bench_glib_passes(peer, perChunk) }
        bench_glib_destroy(peer)
    default:
        fatalError("glib-hosting: unknown pass kind \(kind)")
    }
    precondition(callouts >= perChunk * chunks, "glib-hosting: \(kind) made \(callouts) callouts")
    return quantile(samples.sorted(), 0.5)
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
precondition(bench_pin_current_thread(roundTripCPU) == 0, "glib-hosting: could not pin the main thread")
hosting_count_blocking_polls()
print("| mode | hops | p50 | p99 | max | idle wake-ups/s (switches) | idle wake-ups/s (GLib polls) | loadavg |")
print("|---|---|---|---|---|---|---|---|")
for name in options.order {
    let mode = mode(named: name)
    let latencies = hops(mode, count: options.hops).sorted()
    let idle = idleWakeUps(mode, seconds: options.idleSeconds)
    let perSecond = { (count: Int) in String(format: "%.1f", Double(count) / Double(options.idleSeconds)) }
    print("| \(mode.name) | \(latencies.count) | \(durationText(quantile(latencies, 0.5))) | "
        + "\(durationText(quantile(latencies, 0.99))) | \(durationText(latencies.last ?? 0)) | "
        + "\(perSecond(idle.switches)) | \(perSecond(idle.polls)) | \(loadAverage()) |")
}

if options.passes > 0 {
    print("")
    print("| polling pass + 1 callout | ns per pass (median of 21 chunks) | loadavg |")
    print("|---|---|---|")
    for kind in options.passOrder {
        let cost = passCost(kind, passes: options.passes)
        print("| \(kind) | \(String(format: "%.0f", cost)) | \(loadAverage()) |")
    }
}
