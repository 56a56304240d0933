import PThreads
import Dispatch
import RunLoopKit
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The "resident thread" pattern (AFNetworking's network thread): a background thread whose loop
/// is kept alive by a port source and run in a loop guarded by a keep-running flag; other threads
/// perform work on it and wait until it is done; it is stopped with the flag plus `stop()`, the
/// thread exits and its loop is torn down (W6: at thread exit the loop's sources, timers and
/// blocks are dropped and its descriptors closed). The other thread's work goes through
/// `ScenarioInputs`, so `Scenario.replay` can apply it again on a virtual clock.
enum ResidentThreadScenario {
    static let jobs = 3

    static let scenario = Scenario(
        name: "resident-thread",
        summary: "a background loop kept alive by a port runs work for another thread (wait until done), then stops and exits cleanly",
        replayable: run
    )

    /// The jobs and the stop request are blocks registered under the labels "job N" and "stop",
    /// enqueued through `inputs` while the resident loop waits, so a replay can put them back.
    private static func run(_ options: ScenarioOptions, _ inputs: ScenarioInputs) -> ScenarioResult {
        let descriptorsBefore = options.processIsQuiet ? ProcessResources.openDescriptors() : 0
        let threadsBefore = options.processIsQuiet ? ProcessResources.threadIDs() : []
        let recorder = TraceRecorder()
        let shared = ResidentState()
        let started = DispatchSemaphore(value: 0)
        var lines: [String] = []
        var checks: [ScenarioCheck] = []

        let resident = ScenarioThread.start(name: "resident") { () -> Int in
            let loop = inputs.threadLoop()
            inputs.attach(recorder, to: loop)
            recorder.observeActivities(on: loop)
            // A port nobody sends to: it keeps the default mode from being empty, so run()
            // sleeps instead of returning .finished at once.
            loop.add(scenarioPort(label: "keepAlivePort") { _ in }, mode: .default)
            shared.publish(loop: loop, thread: pthread_self())
            started.signal()
            var runs = 0
            while shared.keepRunning.load(ordering: .acquiring) {
                options.runner.run(loop, mode: .default, timeout: 1e10)
                runs += 1
            }
            recorder.log("resident loop left its run loop after \(runs) run(s)")
            inputs.finishThreadLoop(loop)
            return runs
        }

        let startedInTime = started.wait(timeout: .now() + .seconds(10)) == .success
        if startedInTime, let loop = shared.loop {
            lines.append("resident thread started its loop")
            for job in 1...jobs {
                let done = DispatchSemaphore(value: 0)
                inputs.blocks.register("job \(job)", calloutLabel: "job \(job)") {
                    shared.recordJob(job)
                    recorder.log("job \(job) runs on the resident thread")
                    done.signal()
                }
                let enqueued = inputs.performAndWake("job \(job)", on: loop, afterLoopWaits: true)
                // waitUntilDone: YES — bounded so a broken loop reports instead of hanging.
                let finished = enqueued && done.wait(timeout: .now() + .seconds(10)) == .success
                let (ranOnResident, order) = shared.jobReport()
                lines.append("job \(job) " + (finished ? "done" : "NOT done")
                             + (ranOnResident ? " on the resident thread" : " on another thread")
                             + ", jobs so far \(order)")
            }
            // Stop: clear the flag and stop the run from the resident thread itself, so the
            // flag is always seen (W1: stop() does nothing unless a run is under way, so a stop()
            // between two runs would be lost).
            inputs.blocks.register("stop", calloutLabel: "stopResidentLoop") {
                shared.keepRunning.store(false, ordering: .releasing)
                loop.stop()
            }
            if !inputs.performAndWake("stop", on: loop, afterLoopWaits: true) {
                lines.append("the stop request could not be enqueued")
            }
            lines.append("stop requested (keepRunning = false + stop())")
        } else {
            lines.append("resident thread did not start")
        }
        let runs = resident.join()
        lines.append("resident thread exited")
        checks.append(ScenarioCheck("the resident loop ran until stopped (one run per stop)", runs == 1, "\(runs) run(s)"))
        checks.append(ScenarioCheck("the loop was torn down at thread exit (weak reference is nil)",
                                    shared.loop == nil, shared.loop == nil ? "released" : "still alive"))
        if options.processIsQuiet {
            let descriptorsAfter = ProcessResources.openDescriptors()
            // The joined resident thread's task may stay listed a moment longer: up to 2 s for it.
            let threadsAfter = ProcessResources.threadIDs(within: .seconds(2), allIn: threadsBefore)
            checks.append(ScenarioCheck("open descriptors back to the baseline", descriptorsAfter == descriptorsBefore,
                                        "\(descriptorsBefore) before, \(descriptorsAfter) after"))
            checks.append(ScenarioCheck("no thread left that was not there before", threadsAfter.isSubset(of: threadsBefore),
                                        "\(threadsBefore.count) before, \(threadsAfter.count) after"))
        }
        var expected = ["resident thread started its loop"]
        for job in 1...jobs {
            expected.append("job \(job) done on the resident thread, jobs so far \((1...job).map { $0 })")
        }
        expected += ["stop requested (keepRunning = false + stop())", "resident thread exited"]
        return ScenarioOutcome(expected: expected, produced: lines, checks: checks, timelineHidesObservers: true)
            .result(name: "resident-thread", entries: recorder.entries, inputs: recorder.inputs, crossThread: inputs)
    }
}

/// What the scenario thread and the resident thread share.
private final class ResidentState: Sendable {
    private struct Shared {
        weak var loop: Loop?
        var residentThread: pthread_t?
        var jobs: [Int] = []
        var allOnResident = true
    }

    let keepRunning = Atomic<Bool>(true)
    private let shared = Locked(Shared())

    func publish(loop: Loop, thread: pthread_t) {
        shared.withLock {
            $0.loop = loop
            $0.residentThread = thread
        }
    }

    var loop: Loop? { shared.withLock { $0.loop } }

    /// Called by a job on the thread it runs on.
    func recordJob(_ job: Int) {
        let me = pthread_self()
        shared.withLock {
            $0.jobs.append(job)
            if let resident = $0.residentThread, pthread_equal(resident, me) == 0 { $0.allOnResident = false }
        }
    }

    func jobReport() -> (allOnResident: Bool, order: [Int]) {
        shared.withLock { ($0.allOnResident && !$0.jobs.isEmpty, $0.jobs) }
    }
}
