// Both orders for every package-benchmark row. package-benchmark runs the benchmarks of a target
// sorted by name, each in a process of its own (BenchmarkTool.swift, "run each benchmark for the
// target as a separate process"), so within one work the implementations run one after another
// in the order of their names. Scripts/run-all.sh runs its rounds alternately with
// RUNLOOPKIT_BENCH_ORDER=ours-first and =peers-first; each target then renames its benchmarks
// "<work> · <rank>:<implementation>", the rank putting ours before every peer of the same work
// or after all of them. Scripts/ratios.py strips the rank and reports the worse order's ratio.

@preconcurrency import Benchmark
#if canImport(Glibc)
import Glibc
#endif

/// Which side of each work package-benchmark runs first.
public enum RunOrder: String, Sendable {
    case oursFirst = "ours-first"
    case peersFirst = "peers-first"

    /// The order RUNLOOPKIT_BENCH_ORDER names, or nil when it is unset (names stay unranked and
    /// package-benchmark's alphabetical order decides).
    public static var requested: RunOrder? {
        guard let text = getenv("RUNLOOPKIT_BENCH_ORDER") else { return nil }
        guard let order = RunOrder(rawValue: String(cString: text)) else {
            fatalError("RUNLOOPKIT_BENCH_ORDER must be ours-first or peers-first, not '\(String(cString: text))'")
        }
        return order
    }
}

/// The implementations that are RunLoopKit's, or a reference work's own side: the keys of OURS
/// in Scripts/ratios.py (keep the two in step).
public let oursImplementations: Set<String> = [
    "Loop", "Autorelease", "Transactions",
    "libuv beside a busy libuv loop", "libuv beside 10,000 idle fds", "hand-written dirty list on 65536 nodes",
]

/// Ranks every registered benchmark named "<work> · <implementation>" for the requested order.
/// Call it last in a target's `benchmarks` closure.
public func applyRunOrder(ours: Set<String> = oursImplementations) {
    guard let order = RunOrder.requested else { return }
    for benchmark in Benchmark.benchmarks {
        let name = benchmark.baseName
        guard let separator = name.range(of: " · ", options: .backwards) else { continue }
        let implementation = String(name[separator.upperBound...])
        let isOurs = ours.contains(implementation)
        let rank = (isOurs == (order == .oursFirst)) ? 1 : 2
        benchmark.baseName = "\(name[..<separator.upperBound])\(rank):\(implementation)"
    }
}
