import CAllocationCounter
import PThreads
import RunLoopCore
import Transactions

/// Attributes the calling thread's allocations to callouts and turns of one loop.
///
/// It is the loop's event sink (turns) and its innermost callout interceptor (callouts); the
/// sink it replaces keeps receiving every event. Its own bookkeeping, and the replaced sink's
/// work, are counted apart (``ThreadAllocationFigures/ignored``), so the figures hold only what
/// the loop's items and the loop itself allocated.
///
/// ```swift
/// AllocationCounter.mode = .counting
/// let attributor = AllocationAttributor()
/// attributor.install(on: loop)
/// loop.run(mode: .default, timeout: .zero)
/// for callout in attributor.callouts { print(callout.label, callout.user.bytes) }
/// ```
public final class AllocationAttributor: LoopCalloutInterceptor, LoopEventSink, Sendable {
    private let shared: Locked<State>
    /// Callout records kept at most; later ones are counted in ``droppedCallouts``.
    public let capacity: Int
    /// How many sites a turn's ``TurnAllocation/peakSnapshot`` keeps.
    public let topSites: Int

    private struct OpenScope {
        var kind: AllocationScopeKind
        var label: String
        var start: rlk_alloc_thread_figures
        var highestUser: Int64
        var highestPool: Int64
        var previousSite: UInt32
        var isTurn: Bool
        var firstCallout: Int
        var startPass: UInt64
        var startTime: LoopInstant
    }

    private struct State {
        var scopes: [OpenScope] = []
        var callouts: [CalloutAllocation] = []
        var turns: [TurnAllocation] = []
        var dropped = 0
        var runDepth = 0
        var forward: (any LoopEventSink)?
        var snapshot: UnsafeMutablePointer<Int64>
        var lastPass: UInt64 = 0
        var lastTime: LoopInstant = .zero
        var clock: (any LoopClock)?
    }

    /// The loop clock's time, or the last event's time before `install(on:)`.
    private static func now(_ state: State) -> LoopInstant { state.clock?.now ?? state.lastTime }

    /// - Parameters:
    ///   - capacity: the most callout records kept.
    ///   - topSites: how many sites each turn's peak snapshot keeps.
    public init(capacity: Int = 1_000_000, topSites: Int = 5) {
        self.capacity = capacity
        self.topSites = topSites
        let buffer = UnsafeMutablePointer<Int64>.allocate(capacity: Int(RLK_ALLOC_MAX_SITES))
        buffer.initialize(repeating: 0, count: Int(RLK_ALLOC_MAX_SITES))
        shared = Locked(State(snapshot: buffer))
    }

    deinit { shared.withLock { $0.snapshot }.deallocate() }

    /// Becomes `loop`'s event sink (forwarding to the one installed) and adds itself as the
    /// innermost callout interceptor. Install before the loop runs, or from its thread.
    public func install(on loop: Loop) {
        AllocationCounter.ignoring {
            let previous = loop.eventSink
            shared.withLock { state in
                state.forward = previous
                state.clock = loop.clock
            }
            loop.eventSink = self
            loop.addCalloutInterceptor(self)
        }
    }

    /// Undoes ``install(on:)``: the forwarded sink becomes the loop's sink again.
    public func uninstall(from loop: Loop) {
        let previous = shared.withLock { $0.forward }
        loop.removeCalloutInterceptor(self)
        if loop.eventSink === self { loop.eventSink = previous }
    }

    /// The callout records, in the order the callouts ended.
    public var callouts: [CalloutAllocation] { AllocationCounter.ignoring { shared.withLock { $0.callouts } } }
    /// The turns, oldest first.
    public var turns: [TurnAllocation] { AllocationCounter.ignoring { shared.withLock { $0.turns } } }
    /// Callouts not kept because ``capacity`` was reached.
    public var droppedCallouts: Int { shared.withLock { $0.dropped } }

    /// Forgets every record (open scopes stay open).
    public func clear() {
        AllocationCounter.ignoring {
            shared.withLock { state in
                state.callouts.removeAll()
                state.turns.removeAll()
                state.dropped = 0
            }
        }
    }

    // MARK: Spans

    /// Measures `body` as a span of its own (nested in the current callout), e.g. one phase
    /// of a callout's work.
    public func measure<Result, Failure: Error>(_ label: String, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        begin(.measured, label, isTurn: false)
        defer { end() }
        return try body()
    }

    /// Wraps the layout and display work of `root` and of every layer below it now, so each
    /// layer's layout and display is a span of its own (``AllocationScopeKind/layout`` and
    /// ``AllocationScopeKind/display``) inside the callout that commits.
    public func measureLayoutAndDisplay(of root: Layer) {
        var pending = [root]
        while let layer = pending.popLast() {
            let layout = layer.onLayout
            let display = layer.onDisplay
            layer.onLayout = { [unowned self] layer in
                begin(.layout, layer.name, isTurn: false)
                if let layout { layout(layer) } else { layer.delegate?.layout(layer) }
                end()
            }
            layer.onDisplay = { [unowned self] layer, rect in
                begin(.display, layer.name, isTurn: false)
                if let display { display(layer, rect) } else { layer.delegate?.display(layer, dirtyRect: rect) }
                end()
            }
            pending.append(contentsOf: layer.sublayers)
        }
    }

    // MARK: LoopCalloutInterceptor

    public func willCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        begin(.callout(kind), label, isTurn: false)
    }

    public func didCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        end()
    }

    // MARK: LoopEventSink

    public func loop(_ loop: Loop, emitted event: LoopEvent) {
        // An input may come from any thread and opens or closes nothing: only passed on.
        if case .input = event.kind {
            if let forward = shared.withLock({ $0.forward }) { AllocationCounter.ignoring { forward.loop(loop, emitted: event) } }
            return
        }
        let raw = AllocationCounter.readRaw()
        let previousCategory = rlk_alloc_set_category(RLK_ALLOC_IGNORED)
        let (opens, closes, forward) = shared.withLock { (state: inout State) -> (Bool, Bool, (any LoopEventSink)?) in
            state.lastPass = event.pass
            state.lastTime = event.time
            let turnOpen = state.scopes.contains { $0.isTurn }
            switch event.kind {
            case .runBegin:
                state.runDepth += 1
                return (!turnOpen, false, state.forward)
            case .wake:
                return (!turnOpen, false, state.forward)
            case .sleep:
                return (false, turnOpen && state.runDepth <= 1, state.forward)
            case .runEnd:
                state.runDepth = max(0, state.runDepth - 1)
                return (false, turnOpen && state.runDepth == 0, state.forward)
            default:
                return (false, false, state.forward)
            }
        }
        rlk_alloc_set_category(previousCategory)
        // A turn closes before the event is forwarded and opens after, so the forwarded
        // sink's work at the edges stays outside both (it is ignored anyway).
        if closes { end(raw: raw) }
        if let forward { AllocationCounter.ignoring { forward.loop(loop, emitted: event) } }
        if opens { begin(.outside, "", isTurn: true) }
    }

    // MARK: Scopes

    private func begin(_ kind: AllocationScopeKind, _ label: String, isTurn: Bool) {
        let raw = AllocationCounter.readRaw()
        let previousCategory = rlk_alloc_set_category(RLK_ALLOC_IGNORED)
        let generations = rlk_alloc_get_mode() == RLK_ALLOC_GENERATIONS
        let site = generations ? AllocationSites.number(for: isTurn ? .outsideCallouts : AllocationSite(kind: kind.description, label: label)) : nil
        shared.withLock { state in
            Self.foldPeak(raw, into: &state)
            state.scopes.append(OpenScope(
                kind: kind, label: label, start: raw, highestUser: raw.bucket.0.live_bytes,
                highestPool: raw.bucket.1.live_bytes, previousSite: 0, isTurn: isTurn,
                firstCallout: state.callouts.count, startPass: state.lastPass, startTime: isTurn ? state.lastTime : Self.now(state)))
            if let site { state.scopes[state.scopes.count - 1].previousSite = rlk_alloc_set_site(site) }
            if isTurn && generations { rlk_alloc_peak_snapshot_begin(state.snapshot, UInt32(RLK_ALLOC_MAX_SITES)) }
        }
        rlk_alloc_reset_peak()
        rlk_alloc_set_category(previousCategory)
    }

    private func end(raw given: rlk_alloc_thread_figures? = nil) {
        let raw = given ?? AllocationCounter.readRaw()
        let previousCategory = rlk_alloc_set_category(RLK_ALLOC_IGNORED)
        let snapshotLive = shared.withLock { (state: inout State) -> Int64? in
            guard let top = state.scopes.last else { return nil }
            return top.isTurn && rlk_alloc_get_mode() == RLK_ALLOC_GENERATIONS ? rlk_alloc_peak_snapshot_end() : nil
        }
        let top: [SiteLiveBytes] = snapshotLive.map { $0 >= 0 ? peakSites() : [] } ?? []
        shared.withLock { state in
            Self.foldPeak(raw, into: &state)
            guard let scope = state.scopes.popLast() else { return }
            let user = AllocationTotals(raw.bucket.0).since(AllocationTotals(scope.start.bucket.0), highestLive: scope.highestUser)
            let pool = AllocationTotals(raw.bucket.1).since(AllocationTotals(scope.start.bucket.1), highestLive: scope.highestPool)
            if rlk_alloc_get_mode() == RLK_ALLOC_GENERATIONS { rlk_alloc_set_site(scope.previousSite) }
            let interval = rlk_alloc_get_sample_interval()
            let sampled = (raw.samples &- scope.start.samples) &* interval
            if scope.isTurn {
                var inside = AllocationFigures.zero
                for callout in state.callouts[scope.firstCallout...] where callout.depth == 0 { inside = inside + callout.user }
                let outside = AllocationFigures(
                    allocations: user.allocations &- inside.allocations, frees: user.frees &- inside.frees,
                    bytes: user.bytes &- inside.bytes, freedBytes: user.freedBytes &- inside.freedBytes,
                    requestedBytes: user.requestedBytes &- inside.requestedBytes, net: user.net &- inside.net, peak: 0)
                state.turns.append(TurnAllocation(
                    number: state.turns.count + 1, passes: scope.startPass...max(scope.startPass, state.lastPass),
                    start: scope.startTime, end: state.lastTime, liveBytesAtEnd: raw.bucket.0.live_bytes, user: user, poolPages: pool, sampledBytes: sampled,
                    outsideCallouts: outside, callouts: scope.firstCallout..<state.callouts.count, peakSnapshot: top))
            } else {
                let turn = state.scopes.contains { $0.isTurn } ? state.turns.count + 1 : 0
                let depth = state.scopes.filter { !$0.isTurn }.count
                if state.callouts.count < capacity {
                    state.callouts.append(CalloutAllocation(kind: scope.kind, label: scope.label, turn: turn, depth: depth,
                                                            start: scope.startTime, end: Self.now(state), liveBytesAtEnd: raw.bucket.0.live_bytes,
                                                            user: user, poolPages: pool, sampledBytes: sampled))
                } else {
                    state.dropped += 1
                }
            }
            if !state.scopes.isEmpty {
                state.scopes[state.scopes.count - 1].highestUser = max(state.scopes[state.scopes.count - 1].highestUser, scope.highestUser)
                state.scopes[state.scopes.count - 1].highestPool = max(state.scopes[state.scopes.count - 1].highestPool, scope.highestPool)
            }
        }
        rlk_alloc_reset_peak()
        rlk_alloc_set_category(previousCategory)
    }

    /// Folds the thread's peak since the last reset into the innermost open scope.
    private static func foldPeak(_ raw: rlk_alloc_thread_figures, into state: inout State) {
        guard !state.scopes.isEmpty else { return }
        let index = state.scopes.count - 1
        state.scopes[index].highestUser = max(state.scopes[index].highestUser, raw.bucket.0.peak_live_bytes, raw.bucket.0.live_bytes)
        state.scopes[index].highestPool = max(state.scopes[index].highestPool, raw.bucket.1.peak_live_bytes, raw.bucket.1.live_bytes)
    }

    /// The sites with the most live bytes in the snapshot buffer, largest first (site 0, other
    /// threads' memory, left out).
    private func peakSites() -> [SiteLiveBytes] {
        let count = min(AllocationSites.count, Int(RLK_ALLOC_MAX_SITES))
        let buffer = shared.withLock { $0.snapshot }
        var entries: [(Int, Int64)] = []
        for site in 1..<max(1, count) where buffer[site] > 0 { entries.append((site, buffer[site])) }
        entries.sort { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
        return entries.prefix(topSites).map { SiteLiveBytes(site: AllocationSites.site(UInt32($0.0)), bytes: $0.1, blocks: 0) }
    }
}
