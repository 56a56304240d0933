// Runs each of the twelve shapes N times on one side and prints one tab-separated line per shape:
//
//   side  shape  runs  failed  hung  seconds  first-difference
//
// A run fails when it sees other lines than the shape expects, throws, or (virtual loop) has a
// failure reported by the harness; it hangs when it has not ended after --timeout-ms of real time
// (a TestClock test whose task began to sleep after the advance waits for ever; the run is left
// behind and the next one starts). One side per process: withMainSerialExecutor and
// withVirtualLoop both write the runtime's global-enqueue hook.
//
//   async-test-clocks virtual-loop | testclock | testclock-serial  [--runs N] [--timeout-ms M] [--shape NAME]
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
    var timeoutMilliseconds = 1_000
    var shape: String?

    init(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        guard let first = rest.popFirst(), let side = Side(rawValue: first) else {
            fatalError("usage: async-test-clocks virtual-loop|testclock|testclock-serial [--runs N] [--timeout-ms M] [--shape NAME]")
        }
        self.side = side
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { fatalError("\(flag) needs a value") }
            switch flag {
            case "--runs": runs = Int(value)!
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
        return TestClockShapes.all.map { shape in
            let expected = VirtualLoopShapes.all.first { $0.name == shape.name }!.expected
            return (shape.name, expected, {
                do { return .finished(try await shape.run(), reported: []) } catch { return .threw("\(error)") }
            })
        }
    }
}

@MainActor
func runSide(_ options: Options) async {
    for shape in shapes(for: options.side) where options.shape == nil || options.shape == shape.name {
        var failed = 0, hung = 0
        var first: String?
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<options.runs {
            let outcome = await runOnce(timeout: options.timeoutMilliseconds, shape.run)
            switch outcome {
            case .finished(let lines, let reported) where lines == shape.expected && reported.isEmpty:
                continue
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
        let elapsed = start.duration(to: clock.now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print([options.side.rawValue, shape.name, "\(options.runs)", "\(failed)", "\(hung)",
               String(format: seconds), first ?? ""].joined(separator: "\t"))
    }
}

/// Seconds with three decimals, without Foundation's String(format:).
func String(format seconds: Double) -> String {
    let milliseconds = Int((seconds * 1000).rounded())
    let fraction = milliseconds % 1000
    return "\(milliseconds / 1000)." + String(repeating: "0", count: fraction < 10 ? 2 : fraction < 100 ? 1 : 0) + "\(fraction)"
}

let options = Options(CommandLine.arguments)
if options.side == .testClockSerial {
    await withMainSerialExecutor { await runSide(options) }
} else {
    await runSide(options)
}
