// GLib hosting the main thread's work (issue 30, item 8): how long a `@MainActor` job enqueued
// from another thread waits while the main thread runs GLib's main loop, and how often an idle
// GLib main loop wakes up, for each way of getting main-thread work done under GLib:
//
//   tickler   swift-cross-ui's `GtkBackend.mainRunLoopTicklingLoop` (its fix for
//             swift-cross-ui #140): a GLib timeout that runs one pass of Foundation's main run
//             loop (`RunLoop.main.limitDate(forMode: .default)`, which drains the main dispatch
//             queue where `@MainActor` jobs wait) and re-arms itself after min(time to the run
//             loop's next timer, 50 ms). The job is `Task { @MainActor in … }`.
//   invoke    GLib's own cross-thread call, `g_main_context_invoke` on the default context: the
//             job is a C function (no Swift concurrency involved).
//
// Both are measured in one process, one after the other, in the order given; the script runs
// both orders. The main thread and the sender share CPU 0 (`taskset -c 0`), as the loop's other
// cross-thread benchmarks do.
//
// Hops: the sender waits a pseudo-random 0–50 ms (fixed seed, the same sequence for every mode),
// notes the time, enqueues the job and waits for its acknowledgement; the job notes the time it
// runs. Idle: the main loop runs `idle seconds` with nothing to do; the main thread's voluntary
// context switches and GLib's polls with a non-zero timeout are counted.
//
//   glib-hosting [--hops N] [--idle-seconds S] [--order tickler,invoke]

import BenchPasses
import CBenchSupport
import CGLibHostingPeer
import Foundation
import Synchronization

struct Options {
    var hops = 200
    var idleSeconds = 10
    var order = ["tickler", "invoke"]

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { fatalError("glib-hosting: \(flag) needs a value") }
            switch flag {
            case "--hops": hops = Int(value) ?? hops
            case "--idle-seconds": idleSeconds = Int(value) ?? idleSeconds
            case "--order": order = value.split(separator: ",").map(String.init)
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

func mode(named name: String) -> Mode {
    switch name {
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
func idleWakeUps(_ mode: Mode, seconds: Int) -> (switches: Int, polls: Int) {
    mode.setUp()
    let switches = mainThreadVoluntarySwitches(), polls = hosting_blocking_polls()
    let timer = PinnedThread(cpu: roundTripCPU) {
        sleep(UInt32(seconds))
        hosting_glib_quit()
    }
    hosting_glib_run()
    let result = (mainThreadVoluntarySwitches() - switches, hosting_blocking_polls() - polls)
    timer.join()
    mode.tearDown()
    return result
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
