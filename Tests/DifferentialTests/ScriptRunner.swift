// Runs scripts on fresh threads (each thread gets a fresh CFRunLoop, destroyed at thread exit)
// and many scripts in parallel on a few worker threads.

import Foundation
import Synchronization  // Atomic only; locks are NSLock (Mutex gives false TSan reports)

/// Thread-confined result slot handed from the script thread back to the waiting one; the
/// semaphore orders the write before the read.
private final class ResultSlot<T>: @unchecked Sendable {
    var value: T?
}

enum ScriptRunner {
    /// How long one script may take on its thread; CF's runs are real time, the longest script
    /// lasts well under a second, so this only ends a run that hangs.
    static let scriptDeadline: DispatchTimeInterval = .seconds(120)

    /// Runs `body` on a new thread and waits for it, at most `scriptDeadline`: a hung run stops
    /// the process with a message naming `what` instead of hanging the suite (the hung thread
    /// cannot be cancelled).
    static func onFreshThread<T>(_ what: @autoclosure () -> String, _ body: @escaping @Sendable () -> T) -> T {
        let slot = ResultSlot<T>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            slot.value = body()
            done.signal()
        }
        thread.stackSize = 4 << 20
        thread.start()
        guard done.wait(timeout: .now() + scriptDeadline) == .success else {
            fatalError("\(what()) did not finish within \(scriptDeadline): its loop never returned from run")
        }
        return slot.value!
    }

    /// Executes the script on the real CFRunLoop of a fresh thread.
    static func runOnCF(_ script: Script) -> Execution {
        _ = CFInvalidModeLog.captured   // CF's once-per-process line, captured before any script
        return onFreshThread("script seed \(script.seed) on CFRunLoop") {
            let interpreter = ScriptInterpreter(script: script)
            let driver = CFDriver(script: script, interpreter: interpreter)
            interpreter.driver = driver
            interpreter.runScript()
            interpreter.driver = nil
            return interpreter.execution
        }
    }

    /// Executes the script on RunLoopCore's `Loop` (virtual clock) on a fresh thread.
    static func runOnLoop(_ script: Script) -> Execution {
        onFreshThread("script seed \(script.seed) on Loop") {
            let interpreter = ScriptInterpreter(script: script)
            do {
                interpreter.driver = try CoreLoopDriver(script: script, interpreter: interpreter)
            } catch {
                // Scripts only use finite intervals; LoopTimer refuses NaN alone.
                preconditionFailure("LoopTimer refused a script timer: \(error)")
            }
            interpreter.runScript()
            interpreter.driver = nil
            return interpreter.execution
        }
    }

    /// The outcome of one script through both executors.
    struct Outcome: Sendable {
        var script: Script
        var cf: Execution
        var ours: Execution
        var comparison: Comparison
        /// CF runs thrown away because they differed while off their timing assumptions.
        var timingRetries: Int
        /// Set when CF still differed off its timing assumptions after every retry (not compared).
        var unreliable: Bool
    }

    static let maxTimingRetries = 4
    /// Plain scripts: the shortest fixed timeout is 5 ms; CF running 2 ms behind our schedule
    /// inside one run could already have let a deadline pass early.
    static let plainLatenessBudget = 0.002

    /// Runs the script on both loops. CF runs in real time; when its trace differs from ours and
    /// CF was demonstrably off its timing assumptions (a callout drifted off the time grid, a
    /// relative-timeout run was still busy at half its timeout, or CF ran behind our exact
    /// schedule before the difference), that CF run is no reference and CF is run again. A
    /// matching trace is accepted as it is.
    static func differential(_ script: Script) -> Outcome {
        let ours = runOnLoop(script)
        var retries = 0
        while true {
            let cf = runOnCF(script)
            let comparison = TraceComparator.compare(cf: cf, ours: ours, allowSpuriousCycles: script.usesTimeGrid)
            let budget = script.usesTimeGrid ? Double(ScriptGenerator.gridBudgetMs) / 1000 : plainLatenessBudget
            let offSchedule = cf.timingViolation != nil || comparison.cfLateness > budget
            if comparison.matches || !offSchedule || retries >= maxTimingRetries {
                return Outcome(script: script, cf: cf, ours: ours, comparison: comparison, timingRetries: retries,
                               unreliable: !comparison.matches && offSchedule)
            }
            retries += 1
        }
    }

    /// Runs `count` generated scripts starting at `firstSeed` on `workers` threads.
    static func differential(firstSeed: UInt64, count: Int, workers: Int) -> [Outcome] {
        let next = Atomic<Int>(0)
        let results = OutcomeCollector()
        let group = DispatchGroup()
        for _ in 0..<workers {
            group.enter()
            let worker = Thread {
                while true {
                    let index = next.add(1, ordering: .relaxed).oldValue
                    if index >= count { break }
                    let outcome = differential(ScriptGenerator.make(seed: firstSeed &+ UInt64(index)))
                    results.append(outcome)
                }
                group.leave()
            }
            worker.start()
        }
        // Each script has its own deadline (onFreshThread), so this wait ends.
        group.wait()
        return results.all.sorted { $0.script.seed < $1.script.seed }
    }

    /// The same, awaited without blocking a Swift concurrency thread: the workers are plain threads.
    static func differential(firstSeed: UInt64, count: Int, workers: Int) async -> [Outcome] {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: differential(firstSeed: firstSeed, count: count, workers: workers)) }
                .start()
        }
    }
}

/// Outcomes gathered from the worker threads; every access holds `lock`.
private final class OutcomeCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var outcomes: [ScriptRunner.Outcome] = []
    func append(_ outcome: ScriptRunner.Outcome) { lock.withLock { outcomes.append(outcome) } }
    var all: [ScriptRunner.Outcome] { lock.withLock { outcomes } }
}
