import PThreads
import Dispatch
import RunLoopKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Seed 002's network example: a request made on another thread delivers its completion to the
/// loop's thread (performAndWake). Running the loop until the callback sets `done` works;
/// blocking the loop's thread on a semaphore that only the callback signals deadlocks, because
/// the callback is queued on the very loop that is blocked. A watchdog (a bounded wait) shows
/// it instead of hanging; running the loop once afterwards delivers the stuck callback.
///
/// The network threads' work goes through `ScenarioInputs`: recorded live, applied again by
/// `Scenario.replay` on a virtual clock without starting them.
enum WaitForCallbackScenario {
    /// The watchdog's bound on the blocked wait (real time; the wait can never succeed, so the
    /// outcome does not depend on it).
    static let watchdogMilliseconds = 100

    static let scenario = Scenario(
        name: "wait-for-callback",
        summary: "run the loop until a cross-thread callback stops it; the semaphore variant deadlocks (shown by a 100 ms watchdog), nothing hangs",
        replayable: run
    )

    /// The network threads' completions are blocks registered under the labels "response-a"
    /// and "response-b", enqueued through `inputs`, so a replay can put them back.
    private static func run(_ options: ScenarioOptions, _ inputs: ScenarioInputs) -> ScenarioResult {
        let descriptorsBefore = options.processIsQuiet ? ProcessResources.openDescriptors() : 0
        let recorder = TraceRecorder()
        var checks: [ScenarioCheck] = []
        weak var releasedLoop: Loop?
        do {
            let loop = inputs.makeLoop()
            releasedLoop = loop
            inputs.attach(recorder, to: loop)
            let activities = recorder.observeActivities(on: loop)
            let keepAlive = scenarioPort(label: "keepAlivePort") { _ in }
            loop.add(keepAlive, mode: .default)
            let loopThread = pthread_self()
            let callbackDone = Locked(false)   // written by the callback, read between runs

            // (a) Run the loop until the callback says it is done.
            recorder.log("request sent")
            inputs.blocks.register("response-a", calloutLabel: "completionHandler") {
                let onLoopThread = pthread_equal(pthread_self(), loopThread) != 0
                recorder.log("callback: 200 OK" + (onLoopThread ? " on the loop thread" : " on another thread"))
                callbackDone.withLock { $0 = true }
                loop.stop()
            }
            let enqueued = Locked(false)
            let network = inputs.onAnotherThread(name: "network-a") {
                // … the response arrives on the network thread while the loop waits for it …
                let queued = inputs.performAndWake("response-a", on: loop, afterLoopWaits: true)
                enqueued.withLock { $0 = queued }
            }
            // On the loop's clock: 10 real seconds live, 10 timed-out runs at most in a replay.
            let safetyNet = loop.clock.now.advanced(by: .seconds(10))
            var result = Loop.RunResult.finished
            while !callbackDone.withLock({ $0 }) && loop.clock.now < safetyNet {
                result = options.runner.run(loop, mode: .default, timeout: 1)
            }
            network.join()
            recorder.log("run returned \(result)")
            checks.append(ScenarioCheck("(a) the callback was delivered and stopped the run",
                                        callbackDone.withLock({ $0 }) && result == .stopped,
                                        "enqueued while the loop waited: \(inputs.isReplaying || enqueued.withLock { $0 }), done \(callbackDone.withLock { $0 }), run returned \(result)"))

            // (b) Block the loop's thread on a semaphore only the callback signals.
            recorder.log("semaphore variant: request sent")
            let responded = DispatchSemaphore(value: 0)
            inputs.blocks.register("response-b", calloutLabel: "completionHandler") {
                recorder.log("callback: 200 OK")
                responded.signal()
            }
            let queued = Locked(false)
            let network2 = inputs.onAnotherThread(name: "network-b") {
                let enqueued = inputs.performAndWake("response-b", on: loop, afterLoopWaits: false)
                queued.withLock { $0 = enqueued }
            }
            // The watchdog: a bounded wait instead of `responded.wait()`, which would hang.
            let answered = responded.wait(timeout: .now() + .milliseconds(watchdogMilliseconds)) == .success
            network2.join()
            // In a replay nobody enqueued yet: the replay enqueues when the loop next runs.
            let wasQueued = inputs.isReplaying || queued.withLock { $0 }
            if !answered && wasQueued {
                recorder.log("deadlock: the callback is queued on the blocked loop thread")
            } else {
                recorder.log("no deadlock?! answered \(answered), queued \(wasQueued)")
            }
            // Unblock the situation the right way: let the loop run once.
            let once = options.runner.run(loop, mode: .default, timeout: 0)
            let delivered = responded.wait(timeout: .now()) == .success
            recorder.log(delivered ? "after one loop pass the semaphore is signalled" : "the callback is still stuck")
            checks.append(ScenarioCheck("(b) the watchdog saw the deadlock, and one loop pass delivered the callback",
                                        !answered && wasQueued && delivered,
                                        "answered within \(watchdogMilliseconds) ms: \(answered), delivered after one pass: \(delivered) (run returned \(once))"))
            keepAlive.invalidate()
            activities.invalidate()
            loop.eventSink = nil
        }
        checks.append(ScenarioCheck("the loop was released (no retain cycle)", releasedLoop == nil))
        if options.processIsQuiet {
            let descriptorsAfter = ProcessResources.openDescriptors()
            checks.append(ScenarioCheck("open descriptors back to the baseline", descriptorsAfter == descriptorsBefore,
                                        "\(descriptorsBefore) before, \(descriptorsAfter) after"))
        }
        let expected = [
            "request sent",
            "callback: 200 OK on the loop thread",
            "run returned stopped",
            "semaphore variant: request sent",
            "deadlock: the callback is queued on the blocked loop thread",
            "callback: 200 OK",
            "after one loop pass the semaphore is signalled",
        ]
        let produced = recorder.entries.filter { $0.kind == .log }.map(\.label)
        return ScenarioOutcome(expected: expected, produced: produced, checks: checks, timelineHidesObservers: true)
            .result(name: "wait-for-callback", entries: recorder.entries, inputs: recorder.inputs, crossThread: inputs)
    }
}

