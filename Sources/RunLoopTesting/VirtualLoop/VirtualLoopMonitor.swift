import Dispatch
import PThreads
import RunLoopKit
import Runtime
import Synchronization

/// What one virtual-loop test knows of work outside its loop: main-actor use (the runtime's hook
/// on the main executor's lookup), sleeps on a real clock (the loop as a scheduling executor) and
/// inputs from other threads (the loop's event sink). It
/// also takes the jobs the test's thread sends to the global executor onto the loop, and owns
/// the main-queue barrier that keeps a hop to the main actor in step with the loop.
///
/// The runtime hooks reach it through a per-thread slot, set on the test's loop thread while
/// the driver runs; the sink is called on whichever thread makes an input.
final class VirtualLoopMonitor: Sendable {
    let loop: Loop
    /// How long the loop's thread waits for the main queue, in real time.
    let offLoopTimeout: Duration

    /// Inputs from other threads count once the body's task is queued (its own first enqueue
    /// comes from the awaiting test's thread).
    private let watchingInputs = Atomic<Bool>(false)
    /// The loop's thread is waiting for the main queue: inputs from the main thread are the
    /// returns of main-actor work the barrier is waiting for.
    private let inMainBarrier = Atomic<Bool>(false)
    /// The driver's own wake-up from another thread (the off-loop wait's time limit) is not an
    /// input of the test; the number of the thread making it, or 0.
    private let ownWakeThread = Atomic<UInt>(0)
    /// Something on the loop's thread looked up the main actor's executor since the last barrier.
    private let mainActorTouched = Atomic<Bool>(false)
    /// The test used the main actor at some point: every settle ends with a main-queue barrier.
    private let mainActorUsed = Atomic<Bool>(false)
    private let inputs = Locked<[OffLoopInput]>([])
    private let sleeps = Locked(RealClockSleeps())
    private let barrierTimeouts = Atomic<Int>(0)

    init(loop: Loop, offLoopTimeout: Duration) {
        self.loop = loop
        self.offLoopTimeout = offLoopTimeout
    }

    /// The monitor of the test whose loop runs on the calling thread, if any.
    static var current: VirtualLoopMonitor? { MonitorSlot.current }

    // MARK: The driver's switches (loop thread)

    func startWatchingInputs() { watchingInputs.store(true, ordering: .releasing) }

    func stopWatching() { watchingInputs.store(false, ordering: .releasing) }

    /// Makes a wake-up of the loop from the calling thread that is the driver's own.
    func ownWake(_ body: () -> Void) {
        ownWakeThread.store(currentThreadNumber(), ordering: .releasing)
        defer { ownWakeThread.store(0, ordering: .releasing) }
        body()
    }

    // MARK: What the hooks and the sink report

    /// The runtime hook: the loop's thread sent `job` to the global concurrent executor; it
    /// runs on the loop instead, as a job of a task that prefers it (nonisolated code).
    func runOnLoop(_ job: UnownedJob) {
        loop.enqueueTaskJob(ExecutorJob(job))
    }

    /// The runtime hook: the loop's thread looked up the main actor's executor (a hop to it
    /// follows, or a task isolated to it is made).
    func noteMainActorUse() {
        mainActorTouched.store(true, ordering: .releasing)
        mainActorUsed.store(true, ordering: .releasing)
    }

    /// The loop as a scheduling executor: a task on the loop's thread began a sleep on a real
    /// clock, which virtual time cannot end (`remaining` before its deadline, nil for a clock
    /// whose durations are not `Duration`s). The first ``RealClockSleeps/keptLimit`` are kept
    /// with their stacks; later ones are only counted, so a test that polls with a sleep keeps
    /// a bounded record.
    func noteRealClockSleep(clock: String, remaining: Duration?) {
        sleeps.withLock {
            $0.add { RealClockSleep(clock: clock, remaining: remaining, backtrace: ProgramStack.capture()) }
        }
    }

    /// The sleeps on a real clock so far.
    var realClockSleeps: RealClockSleeps { sleeps.withLock { $0 } }

    /// An input to the loop made on another thread (the event sink).
    func noteInput(_ input: LoopEvent.Input, label: String) {
        guard watchingInputs.load(ordering: .acquiring) else { return }
        let thread = currentThreadNumber()
        if ownWakeThread.load(ordering: .acquiring) == thread { return }
        // Main-actor work the loop started and is about to wait for (or waits for) coming back.
        if MainQueue.isCurrent && (inMainBarrier.load(ordering: .acquiring) || mainActorTouched.load(ordering: .acquiring)) {
            return
        }
        let what: String
        switch input {
        case .wakeUp: what = "a job or wake-up"
        case .signal: what = "a signal of source0 '\(label)'"
        case .send: what = "a message to port '\(label)'"
        }
        let backtrace = ProgramStack.capture()
        let input = OffLoopInput(what: what, thread: Loop.currentThreadName, time: loop.clock.now, backtrace: backtrace)
        inputs.withLock { $0.append(input) }
    }

    /// A sleeper an advance resumed had begun to sleep on another thread: one of the main
    /// actor runs on the main queue, which a barrier settles. (Any other was already off the
    /// loop; it is seen if its work comes back to the loop.)
    func noteSleeperOffLoop() {
        mainActorUsed.store(true, ordering: .releasing)
        mainQueueBarrier()
    }

    /// The inputs from other threads so far, oldest first.
    var offLoopInputs: [OffLoopInput] { inputs.withLock { $0 } }

    /// How many main-queue barriers ran out of time.
    var mainQueueTimeouts: Int { barrierTimeouts.load(ordering: .relaxed) }

    // MARK: The main-queue barrier

    /// After a callout or a driver step that used the main actor: blocks the loop's thread
    /// until the main queue has run what was queued on it, so main-actor work and what it sends
    /// back to the loop happen at this point and nowhere else.
    func settleMainActorIfTouched() {
        guard mainActorTouched.load(ordering: .acquiring) else { return }
        mainQueueBarrier()
    }

    /// Whether the test has used the main actor (settles then end with a barrier).
    var usesMainActor: Bool { mainActorUsed.load(ordering: .acquiring) }

    /// Waits until `DispatchQueue.main` has run everything queued on it before now, or until
    /// `offLoopTimeout` passes (counted in ``mainQueueTimeouts``).
    func mainQueueBarrier() {
        inMainBarrier.store(true, ordering: .releasing)
        mainActorTouched.store(false, ordering: .releasing)
        defer { inMainBarrier.store(false, ordering: .releasing) }
        let ran = Locked(false), changed = PThreadCondition()
        DispatchQueue.main.async {
            ran.withLock { $0 = true }
            changed.broadcast()
        }
        let deadline = Nanoseconds.add(MonotonicClock.shared.now.nanoseconds, Nanoseconds.from(offLoopTimeout))
        if !ran.wait(on: changed, untilMonotonicNanoseconds: deadline, until: { $0 }) {
            barrierTimeouts.add(1, ordering: .relaxed)
        }
    }
}

/// Whether the calling code runs on the main queue. Under `swift test` the main thread sits in
/// `dispatch_main()` and the main queue (the main actor's work) is drained by a worker thread,
/// so the thread alone does not tell.
enum MainQueue {
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}

/// The event sink of a virtual-loop test's loop: inputs from other threads go to the monitor,
/// and the end of each callout settles main-actor work the callout started.
final class VirtualLoopSink: LoopEventSink {
    private let monitor: VirtualLoopMonitor

    init(monitor: VirtualLoopMonitor) { self.monitor = monitor }

    func loop(_ loop: Loop, emitted event: LoopEvent) {
        switch event.kind {
        case .input(let input, let fromOwnerThread):
            if !fromOwnerThread { monitor.noteInput(input, label: event.label) }
        case .calloutEnd:
            monitor.settleMainActorIfTouched()
        default:
            break
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
