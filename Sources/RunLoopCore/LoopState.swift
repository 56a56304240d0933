/// A loop's state that other threads reach: every field only with the loop's `lock` held.
struct LoopGuardedState {
    /// CF's `_wakeUpPort`: an eventfd in every mode's epoll set.
    var wakeFD: Int32 = -1
    /// Which run (`RunFrame.serial`) wrote the pending wake-up.
    var wakeSerial: UInt64 = 0
    /// Serial numbers for runs, so a pass can tell its own wake-ups from stale ones.
    var runSerial: UInt64 = 0
    var modes: [Loop.Mode: ModeState] = [:]
    var modeOrder: [Loop.Mode] = []
    /// Modes whose creation failed, with the failure, until a later attempt succeeds.
    var unavailableModes: [Loop.Mode: SystemCallError] = [:]
    /// The last mode looked up by name: runs and performs usually name the same mode again.
    /// Unretained: `modes` keeps every mode for the loop's lifetime (modes are never removed, M1).
    var lastLookup: Unmanaged<ModeState>?
    var commonModeNames: Set<Loop.Mode> = [.default]  // M2
    var commonItems = CommonItems()
    var blocks: [PendingBlock] = []
    /// The modes whose passes run Swift Concurrency jobs (`jobModes`), as the target each job
    /// takes.
    var jobTarget = PendingBlock.Target.one(.common)
    /// Every mode `jobTarget` names exists (`.common` needs none). Modes are never removed
    /// (M1), so from then on a job's enqueue looks up no mode.
    var jobModesExist = true
    /// frames[0] is the base per-run data with `ignoreWakeUps` set (W3: wake-ups are ignored
    /// when the loop is not running); each run pushes frames[depth] (R5).
    var frames: [RunFrame] = []
    var depth = 0
    /// The innermost run's mode; unretained like `lastLookup`.
    var runningMode: Unmanaged<ModeState>?
    var sleeping = false
    /// Threads blocked in `waitUntilWaiting`; the pass broadcasts `sleepStarted` only then.
    var sleepWatchers = 0
    var tornDown = false
    /// Non-main loops: the async queue (an eventfd readable while `asyncPending` is non-empty).
    var asyncFD: Int32 = -1
    var asyncPending: [AsyncWork] = []
    /// Depth of async-queue drains in progress (CF's `__CFTSDKeyIsInGCDMainQ`; only the owner
    /// thread drains, so a per-loop counter is that thread's flag; other threads read it for R4a).
    var insideAsyncDrain = 0
}

/// A loop's state that only its owner thread touches.
struct LoopOwnedState {
    /// Main loop: libdispatch's main-queue eventfd, fetched on first need.
    var dispatchFD: Int32 = -1
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

    mutating func adopt(sink: (any LoopEventSink)?, interceptor: (any LoopCalloutInterceptor)?) {
        activeSink = sink
        activeInterceptor = interceptor
        wrapsCallouts = sink != nil || interceptor != nil
    }
}
