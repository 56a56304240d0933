/// A loop's state that other threads reach: reached only through `LoopLock.Held`.
struct LoopGuardedState {
    /// What the wake-up protocol keeps under the lock (see `WakeUp.swift`).
    var wakeUp = WakeUpState()
    /// Serial numbers for runs, so a pass can tell its own wake-ups from stale ones.
    var runSerial: UInt64 = 0
    var modes: [Loop.Mode: ModeState] = [:]
    var modeOrder: [Loop.Mode] = []
    /// Modes whose creation failed, with the failure, until a later attempt succeeds.
    var unavailableModes: [Loop.Mode: SystemCallError] = [:]
    /// The last mode looked up by name: runs and performs usually name the same mode again.
    /// Unretained: `modes` keeps every mode for the loop's lifetime (modes are never removed, M1).
    var lastLookup: Unmanaged<ModeState>?
    /// M2: the default mode is the only common mode at first.
    var commonModeNames: Set<Loop.Mode> = [.default]
    var commonItems = CommonItems()
    /// The block queue and the async queue, each with a lock-free mirror (see `LoopMirrors`).
    var queues = LoopQueues()
    /// The modes whose passes run Swift Concurrency jobs (`jobModes`), as the target each job
    /// takes.
    var jobTarget = PendingBlock.Target.common
    /// Every mode `jobTarget` names exists (`.common` needs none). Modes are never removed
    /// (M1), so from then on a job's enqueue looks up no mode.
    var jobModesExist = true
    /// frames[0] is the per-run data of "no run": it ignores wake-ups (W3: a wake-up while the
    /// loop is not running does nothing); each run pushes frames[depth] (R5). Frames are never
    /// dropped: a depth reached once keeps its frame for the next run at that depth.
    private(set) var frames: [RunFrame] = []
    /// `frames`' handles, for the runs: reading one takes no reference to its frame.
    private(set) var frameHandles: [RunFrameHandle] = []
    var depth = 0
    /// The innermost run's mode; unretained like `lastLookup`.
    var runningMode: Unmanaged<ModeState>?
    var sleeping = false
    /// Threads blocked in `waitUntilWaiting`; the pass broadcasts `sleepStarted` only then.
    var sleepWatchers = 0
    var tornDown = false
    /// Non-main loops: the async queue's descriptor (readable while async work is queued).
    var asyncFD: Descriptor?
    /// Depth of async-queue drains in progress (CF's `__CFTSDKeyIsInGCDMainQ`; only the owner
    /// thread drains, so a per-loop counter is that thread's flag; other threads read it for R4a).
    var insideAsyncDrain = 0
    /// Diagnostics raised in the current critical section, reported once the lock is released
    /// (`LoopLock.Held.unlockReporting()`): never under the lock, where a handler calling back
    /// into the loop would deadlock.
    var deferredDiagnostics = DeferredDiagnostics()

    /// The innermost run's frame (frames[0] when the loop is not running).
    var innermostFrame: RunFrameHandle { frameHandles[depth] }

    /// R5.1: a frame for a run one level deeper than `depth`, made the first time that depth
    /// is reached.
    mutating func pushFrame() -> RunFrameHandle {
        depth += 1
        if frameHandles.count == depth { addFrame(RunFrame()) }
        // In bounds: `depth` starts at 0 and grows by one, and the line above made a handle at
        // every depth reached. Read without the array's bounds check, which a run paid for.
        return frameHandles.withUnsafeBufferPointer { $0[depth] }
    }

    /// R5's pop: back to the run this one nested in.
    mutating func popFrame() { depth -= 1 }

    mutating func addFrame(_ frame: RunFrame) {
        frames.append(frame)
        frameHandles.append(frame.handle)
    }
}

/// What other threads may change about a run while it runs, under the loop's lock
/// (`LoopLock.Held[frame]`).
struct RunControl {
    /// `stop()` was called for this run (W1).
    var stopped = false
    /// Identifies the run using this frame.
    var serial: UInt64 = 0
    /// W3: the run ignores wake-ups now (from a wake to the top of the next pass). Written by
    /// the loop thread and read by `wakeUp()`, both with the lock held: a producer that finds
    /// it set has queued its work before the loop clears it at the end of the pass, so the
    /// loop's next look at its queues sees the work. (Flipped outside the lock, it let the two
    /// threads miss each other's stores on x86: issue 26, Models/wakeup.pml.)
    var ignoresWakeUps = false
    /// A host event loop drives the run (`HostedRun`): the loop's thread is the host's, so a
    /// wake-up on it is written, not noted (the host may block before the loop looks again).
    var isHosted = false
}

/// A loop's state that only its owner thread touches.
struct LoopOwnedState {
    /// Main loop: libdispatch's main-queue eventfd, fetched on first need.
    var dispatchFD: Descriptor?
    /// Main loop: an io_uring watch on `dispatchFD` (`rlk_readiness_ring`), so a polling pass
    /// sees an idle main queue without a system call; nil when the kernel offers none.
    var mainQueueWatch: OpaquePointer?
    /// Main loop: libdispatch may have poked the main queue since a wait last found its
    /// descriptor unreadable or drained it. Every later poke reaches the watch.
    var mainQueueMayBeReady = true
    /// The sink and interceptor in effect for the running pass, copied from the configured ones
    /// at the start of every run and pass (`refreshInstrumentation`).
    /// Set only through `adopt(sink:interceptor:)`, which keeps `wrapsCallouts` in step.
    private(set) var activeSink: (any LoopEventSink)?
    private(set) var activeInterceptor: (any LoopCalloutInterceptor)?
    /// Either of them is set: a callout without it tests this one flag.
    private(set) var wrapsCallouts = false
    var activeInstrumentationVersion: UInt64 = 0
    /// Teardown is running the jobs left (W6): they are isolated to this loop meanwhile.
    var runningJobsAtTeardown = false
    /// The last exact clock reading a timer pass took (`timerPassTime`): a timer due at it is
    /// long due, and worth asking the coarse clock about.
    var lastTimerReading: UInt64 = 0

    mutating func adopt(sink: (any LoopEventSink)?, interceptor: (any LoopCalloutInterceptor)?) {
        activeSink = sink
        activeInterceptor = interceptor
        wrapsCallouts = sink != nil || interceptor != nil
    }
}

/// Items added to `.common` (CF's `_commonModeItems`).
struct CommonItems {
    var observers: [LoopObserver] = []
    var sources0: [LoopSource] = []
    var ports: [LoopPortSource] = []
    var files: [LoopFileSource] = []
    var timers: [LoopTimer] = []
    var isEmpty: Bool {
        observers.isEmpty && sources0.isEmpty && ports.isEmpty && files.isEmpty && timers.isEmpty
    }
}
