import PThreads
import RunLoopKit

/// Where a scenario's work from other threads comes from. Live, other threads really run and
/// their blocks and wake-ups are recorded as `ScenarioExternalInput`s; in a replay those threads
/// are not started, the loop runs on a `VirtualClock`, and a `ScenarioReplayDriver` applies the
/// recorded inputs at the points the loop observed them.
///
/// A scenario written against it gets its loop and clock here, attaches its recorder here,
/// registers each cross-thread block under a stable label (`blocks`), starts its other threads
/// with `onAnotherThread` and enqueues with `performAndWake`.
final class ScenarioInputs: Sendable {
    /// The closures of the cross-thread blocks, by label.
    let blocks: ScenarioBlockRegistry
    private let replay: (plan: ScenarioReplayPlan, clock: VirtualClock)?
    private let external = Locked<[ScenarioExternalInput]>([])
    private let driver = Locked<ScenarioReplayDriver?>(nil)

    /// Live: real threads on `MonotonicClock`.
    init() {
        blocks = ScenarioBlockRegistry()
        replay = nil
    }

    /// A replay of `plan`; `replacements` stand in for the blocks registered under their labels.
    init(replaying plan: ScenarioReplayPlan, replacing replacements: [String: @Sendable () -> Void] = [:]) {
        blocks = ScenarioBlockRegistry(replacing: replacements)
        replay = (plan, VirtualClock(start: plan.clockStart))
    }

    var isReplaying: Bool { replay != nil }

    /// A new loop, on `MonotonicClock` live and on the replay's virtual clock in a replay.
    func makeLoop() -> Loop {
        replay.map { Loop(clock: $0.clock) } ?? Loop(clock: MonotonicClock.shared)
    }

    /// The calling thread's loop live (`Loop.current`, torn down at thread exit); in a replay a
    /// new loop on the virtual clock, which `finishThreadLoop` tears down.
    func threadLoop() -> Loop {
        replay.map { Loop(clock: $0.clock) } ?? Loop.current
    }

    /// Ends a `threadLoop()`: nothing live (the thread's exit tears it down), `tearDown()` in a replay.
    func finishThreadLoop(_ loop: Loop) {
        guard isReplaying else { return }
        loop.eventSink = nil
        loop.tearDown()
    }

    /// Makes `recorder` record `loop`, through the live input recorder or the replay driver.
    func attach(_ recorder: TraceRecorder, to loop: Loop) {
        guard let replay else {
            recorder.use(clock: loop.clock)
            loop.eventSink = LiveInputRecorder(recorder: recorder, external: external)
            return
        }
        recorder.use(clock: RecordedReadsClock(replay.plan.recorderReadTimes, fallback: replay.clock))
        let driver = ScenarioReplayDriver(plan: replay.plan, recorder: recorder, clock: replay.clock,
                                          blocks: blocks, applied: external)
        self.driver.withLock { $0 = driver }
        loop.eventSink = driver
    }

    /// Live, runs `body` on a new thread; in a replay does not start it (the driver applies
    /// what it did). Join the handle either way.
    func onAnotherThread(name: String, _ body: @escaping @Sendable () -> Void) -> ScenarioThread.Handle<Void> {
        isReplaying ? .notStarted(()) : ScenarioThread.start(name: name, body)
    }

    /// From another thread: enqueues the block registered under `label` on `loop` and wakes it,
    /// recording both inputs. With `afterLoopWaits`, first waits (up to 10 s) until the loop is
    /// in a wait, so the input lands in that wait and a replay can put it back there. Returns
    /// false when the loop did not wait in time, the label was not registered, or the loop
    /// refused the block. In a replay it does nothing and returns true.
    func performAndWake(_ label: String, on loop: Loop, afterLoopWaits: Bool) -> Bool {
        guard !isReplaying else { return true }
        if afterLoopWaits && !loop.waitUntilWaiting(timeout: .seconds(10)) { return false }
        guard let block = blocks.take(label, limit: .zero) else { return false }
        let position = (loop.eventSink as? LiveInputRecorder)?.recordedCount ?? 0
        external.withLock { $0.append(ScenarioExternalInput(after: position, action: .perform(label: label), time: loop.clock.now)) }
        return loop.performAndWake(label: block.calloutLabel, block.work)
    }

    /// The inputs other threads gave the loop (live), or those the replay applied.
    var externalInputs: [ScenarioExternalInput] { external.withLock { $0 } }

    /// What a replay could not apply (empty live).
    var replayProblems: [String] { driver.withLock { $0?.problems } ?? [] }
}
