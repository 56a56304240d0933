// Runs each of the twelve shapes N times on one side and prints one tab-separated line per shape:
//
//   side  shape  runs  parallel  failed  hung  seconds  first-difference
//
// A run fails when it sees other lines than the shape expects, throws, or (virtual loop) has a
// failure reported by the harness; it hangs when it has not ended after --timeout-ms of real time
// (a TestClock test whose task began to sleep after the advance waits for ever; the run is left
// behind and the next one starts). One side per process: withMainSerialExecutor and
// withVirtualLoop both write the runtime's global-enqueue hook.
//
// testclock-serial wraps each run in its own withMainSerialExecutor, as a test does. With
// --parallel K, K runs are under way at once (K tasks, each doing runs/K in a row), as Swift
// Testing runs tests in parallel by default.
//
//   async-test-clocks virtual-loop | testclock | testclock-serial
//                     [--runs N] [--parallel K] [--timeout-ms M] [--shape NAME]
import ConcurrencyExtras
import Dispatch
import RunLoopTesting
import Synchronization

enum Side: String {
    case virtualLoop = "virtual-loop"
    case testClock = "testclock"
    case testClockSerial = "testclock-serial"
}

struct Options {
    var side = Side.virtualLoop
    var runs = 10_000
    var parallel = 1
    var timeoutMilliseconds = 1_000
    var shape: String?

    init(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        guard let first = rest.popFirst(), let side = Side(rawValue: first) else {
            fatalError("usage: async-test-clocks virtual-loop|testclock|testclock-serial [--runs N] [--parallel K] [--timeout-ms M] [--shape NAME]")
        }
        self.side = side
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { fatalError("\(flag) needs a value") }
            switch flag {
            case "--runs": runs = Int(value)!
            case "--parallel": parallel = max(1, Int(value)!)
            case "--timeout-ms": timeoutMilliseconds = Int(value)!
            case "--shape": shape = value
            default: fatalError("unknown option \(flag)")
            }
        }
    }
}

enum Outcome: Sendable {
    case finished([String], reported: [String])
    case threw(String)
    case hung
}

/// Runs `body` once, giving up on it after `timeout` of real time.
func runOnce(timeout: Int, _ body: @escaping @Sendable () async -> Outcome) async -> Outcome {
    let once = Mutex(false)
    return await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
        let resumeOnce: @Sendable (Outcome) -> Void = { outcome in
            if once.withLock({ done in defer { done = true }; return !done }) { continuation.resume(returning: outcome) }
        }
        let run = Task { resumeOnce(await body()) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(timeout)) {
            run.cancel()
            resumeOnce(.hung)
        }
    }
}

/// The shapes of one side, each with the lines a right run sees.
func shapes(for side: Side) -> [(name: String, expected: [String], run: @Sendable () async -> Outcome)] {
    switch side {
    case .virtualLoop:
        return VirtualLoopShapes.all.map { shape in
            (shape.name, shape.expected, {
                let reporter = CollectingLoopTestReporter()
                do { return .finished(try await shape.run(reporter), reported: reporter.messages) }
                catch { return .threw("\(error)") }
            })
        }
    case .testClock, .testClockSerial:
        let serial = side == .testClockSerial
        return TestClockShapes.all.map { shape in
            let expected = VirtualLoopShapes.all.first { $0.name == shape.name }!.expected
            return (shape.name, expected, {
                guard serial else {
                    do { return .finished(try await shape.run(), reported: []) } catch { return .threw("\(error)") }
                }
                let outcome = Mutex<Outcome>(.hung)
                await withMainSerialExecutor {
                    let result: Outcome
                    do { result = .finished(try await shape.run(), reported: []) } catch { result = .threw("\(error)") }
                    outcome.withLock { $0 = result }
                }
                return outcome.withLock { $0 }
            })
        }
    }
}

/// What the runs of one shape came to.
struct Tally: Sendable {
    var failed = 0, hung = 0
    var first: String?

    mutating func add(_ outcome: Outcome, expected: [String]) {
        switch outcome {
        case .finished(let lines, let reported) where lines == expected && reported.isEmpty:
            return
        case .finished(let lines, let reported):
            failed += 1
            if first == nil { first = "saw \(lines)" + (reported.isEmpty ? "" : " reported \(reported)") }
        case .threw(let error):
            failed += 1
            if first == nil { first = "threw \(error)" }
        case .hung:
            hung += 1
            if first == nil { first = "hung" }
        }
    }

    mutating func merge(_ other: Tally) {
        failed += other.failed
        hung += other.hung
        first = first ?? other.first
    }
}

func runSide(_ options: Options) async {
    for shape in shapes(for: options.side) where options.shape == nil || options.shape == shape.name {
        let clock = ContinuousClock()
        let start = clock.now
        let tally = await withTaskGroup(of: Tally.self) { group in
            for worker in 0..<options.parallel {
                let share = options.runs / options.parallel + (worker < options.runs % options.parallel ? 1 : 0)
                group.addTask {
                    var tally = Tally()
                    for _ in 0..<share {
                        tally.add(await runOnce(timeout: options.timeoutMilliseconds, shape.run), expected: shape.expected)
                    }
                    return tally
                }
            }
            var total = Tally()
            for await part in group { total.merge(part) }
            return total
        }
        let elapsed = start.duration(to: clock.now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print([options.side.rawValue, shape.name, "\(options.runs)", "\(options.parallel)", "\(tally.failed)", "\(tally.hung)",
               String(format: seconds), tally.first ?? ""].joined(separator: "\t"))
    }
}

/// Seconds with three decimals, without Foundation's String(format:).
func String(format seconds: Double) -> String {
    let milliseconds = Int((seconds * 1000).rounded())
    let fraction = milliseconds % 1000
    return "\(milliseconds / 1000)." + String(repeating: "0", count: fraction < 10 ? 2 : fraction < 100 ? 1 : 0) + "\(fraction)"
}

await runSide(Options(CommandLine.arguments))
