/// Everything a `CommitPipeline` changes after its creation, in one value that the pipeline keeps
/// in a `ConfinedState` (one thread uses a pipeline; see there for why a pointer).
struct PipelineState {
    // Configuration the host may change.
    var sink: any CommitSink
    var completionScheduler: any CompletionScheduler
    var wakeUp = WakeUpHandler()
    var tooLateBudget: Duration = CommitPipeline.defaultTooLateBudget
    var runLevel = 0

    // Where the pipeline is.
    var phase: CommitPipeline.Phase = .idle
    var frameNumber: UInt64 = 0
    var pendingSince: LoopInstant?
    var lastCommitTime: LoopInstant?
    /// Set once per commit when work for the next commit asked the host to wake up.
    var wokeDuringThisCommit = false

    // The transaction stack.
    var scopes: [TransactionScope] = []
    var explicitDepth = 0
    var flushRequested = false
    var pendingCompletions: [PendingCompletion] = []
    /// `runCompletions` walks this while callouts may append to `pendingCompletions`.
    var completionScratch: [PendingCompletion] = []

    // Hooks.
    var beforeHooks: [(token: CommitPipeline.HookToken, hook: () -> Void)] = []
    var afterHooks: [(token: CommitPipeline.HookToken, hook: (CommitSnapshot) -> Void)] = []
    var postCommitCallbacks: [(level: Int, callback: () -> Void)] = []
    var nextHookID: UInt64 = 0

    // What the running commit did, for its snapshot.
    var laidOutRecord: [LayerIdentity] = []
    var displayedRecord: [DisplayedLayer] = []
    /// The last commit's record buffers, emptied, for the next commit to fill without a malloc.
    var spareLaidOutRecord: [LayerIdentity] = []
    var spareDisplayedRecord: [DisplayedLayer] = []

    /// One strong reference per queued layer (queue keys are unretained `LayerRef`s). A layer is
    /// added when it enters its first phase and dropped after a commit once it has left them all.
    var queuedLayers: [Layer] = []

    /// `CommitPipeline.wakeUpHandler`, in a struct: a key path reaches a field by its offset only
    /// when the field's type is not a function type (`ConfinedState` needs the offset).
    struct WakeUpHandler {
        var call: (() -> Void)?
    }

    init(sink: any CommitSink, completionScheduler: any CompletionScheduler) {
        self.sink = sink
        self.completionScheduler = completionScheduler
    }

    /// The completions of the commit now running; callouts that open transactions meanwhile
    /// queue theirs for the next commit, in last commit's emptied buffer.
    mutating func takeCompletions() -> [PendingCompletion] {
        var due = completionScratch
        completionScratch = []
        swap(&due, &pendingCompletions)
        return due
    }

    /// Drops what the pipeline holds for its thread (transactions, queued layers, hooks, the
    /// sink, the wake-up handler); counters and settings stay.
    mutating func clearForThreadExit(clock: any TransactionClock) {
        scopes = []
        explicitDepth = 0
        pendingSince = nil
        queuedLayers = []
        pendingCompletions = []
        beforeHooks = []
        afterHooks = []
        postCommitCallbacks = []
        completionScheduler = ClockCompletionScheduler(clock: clock)
        wakeUp.call = nil
        sink = FrameLog(capacity: 1)
    }

    /// A new hook's token.
    mutating func makeHookToken() -> CommitPipeline.HookToken {
        nextHookID += 1
        return CommitPipeline.HookToken(id: nextHookID)
    }
}
