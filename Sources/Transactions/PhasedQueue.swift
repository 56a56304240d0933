/// A generic, phased, coalescing work queue: the machinery under the layer commit, public so a
/// service can defer its own work with the same guarantees.
///
/// - **Phases** run in the order they were declared, once per `drain`.
/// - **Keyed coalescing**: enqueueing a key that is already waiting in a phase does nothing.
/// - **Order within a phase**: by `order` — `.depth` (shallowest first, ties in enqueue order),
///   `.enqueueOrder`, or a custom comparator.
/// - **Re-entrancy** (work enqueued while a drain runs):
///   - into a *later* phase than the running one (or before the first phase ran): this drain;
///   - into an *earlier* phase: the next drain (that phase has already run);
///   - into the *running* phase: per the phase's `Reentrancy` — `.nextRound(maxRounds:)` runs it
///     in another round of the same drain (re-sorted), up to `maxRounds` rounds, and leaves what is
///     still pending after that for the next drain (reported in `PhaseReport.leftover`);
///     `.nextDrain` leaves it for the next drain. A key that is still waiting in the running round
///     is coalesced into it, so no key is visited twice in one round.
///
/// Keys conform to `PhasedQueueKey` (an empty conformance for a `Hashable` type; `String` and
/// `Int` already conform), which also chooses where "is this key waiting in this phase?" is
/// recorded: hashed in the queue by default, or in the key itself (see `PhaseMembership`).
///
/// Not thread-safe: confine a queue to one thread (the pipeline's thread).
///
/// Example (a service, not UI): recompute aggregates, then write each dirty file once.
/// ```swift
/// enum Work: PhasedQueueKey { case aggregate(String), file(String) }
/// let queue = PhasedQueue<Work>(phases: [.init("recompute"), .init("write out", reentrancy: .nextDrain)])
/// queue.enqueue(.aggregate("users"), phase: 0)
/// queue.enqueue(.aggregate("users"), phase: 0)        // coalesced
/// queue.drain { phase, work in
///     switch work {
///     case .aggregate(let name): queue.enqueue(.file(name + ".json"), phase: 1)   // same drain
///     case .file(let path): print("write", path)
///     }
/// }
/// ```
public final class PhasedQueue<Key: PhasedQueueKey> {
    /// What happens to a key enqueued into the phase that is currently running.
    public enum Reentrancy {
        /// Run it in another round of the same drain; give up after `maxRounds` rounds in total.
        case nextRound(maxRounds: Int)
        /// Leave it for the next drain.
        case nextDrain
    }

    /// How keys are ordered within one round of a phase.
    public enum Order {
        /// The order they were enqueued.
        case enqueueOrder
        /// Smallest `depth` (as given to `enqueue`) first; equal depths keep enqueue order.
        case depth
        /// Smallest rank first, the rank computed for every key at the start of each round (so it
        /// may change between enqueue and drain, e.g. a node that moved in a tree); equal ranks keep
        /// enqueue order.
        case rank((Key) -> Int)
        /// A strict weak ordering supplied by the caller (a stable sort is used).
        case custom((Key, Key) -> Bool)
    }

    /// One phase of the queue.
    public struct Phase {
        public let name: String
        public let reentrancy: Reentrancy
        public let order: Order

        /// - Parameters:
        ///   - name: the phase's name, used in traces and diagnostics.
        ///   - reentrancy: default `.nextRound(maxRounds: 4)` (the layout rule).
        ///   - order: default `.depth`.
        public init(_ name: String, reentrancy: Reentrancy = .nextRound(maxRounds: 4), order: Order = .depth) {
            self.name = name
            self.reentrancy = reentrancy
            self.order = order
        }
    }

    /// What one phase did during a drain.
    public struct PhaseReport {
        /// Rounds run (0 when the phase had nothing to do).
        public var rounds: Int = 0
        /// Keys handed to the handler, in order.
        public var performed: Int = 0
        /// Keys still pending in this phase after the round cap (left for the next drain).
        public var leftover: [Key] = []
    }

    struct Entry {
        let key: Key
        var depth: Int
    }

    /// One phase: its settings, and its lists behind one pointer (see `ConfinedState`). A class,
    /// so the arrays are mutated in place (no copy-on-write).
    final class PhaseState {
        let phase: Phase
        /// Rounds per drain, from `phase.reentrancy` (read once, not switched on every run).
        let maxRounds: Int
        /// Whether `phase.reentrancy` is `.nextRound`.
        let runsReentrantWorkThisDrain: Bool
        /// `phase.order`'s rank function, unpacked: binding it out of the enum on every round
        /// would retain and release its context.
        let rankOf: ((Key) -> Int)?
        let lists = ConfinedState(PhaseLists())

        init(_ phase: Phase) {
            self.phase = phase
            switch phase.reentrancy {
            case let .nextRound(cap):
                maxRounds = cap
                runsReentrantWorkThisDrain = true
            case .nextDrain:
                maxRounds = 1
                runsReentrantWorkThisDrain = false
            }
            if case let .rank(rank) = phase.order { rankOf = rank } else { rankOf = nil }
        }
    }

    /// The keys of one phase.
    struct PhaseLists {
        /// Runs in this (or the next) drain.
        var pending: [Entry] = []
        /// Runs in the next drain.
        var deferred: [Entry] = []
        /// The round being performed.
        var batch: [Entry] = []
        /// Every key waiting in this phase (empty, and free, for keys with their own membership).
        var members = Key.Membership()

        mutating func moveDeferredToPending() {
            pending.append(contentsOf: deferred)
            deferred.removeAll(keepingCapacity: true)
        }
    }

    /// Where the queue is, across its phases.
    struct Counts {
        /// -1: drain started, no phase yet; nil: not draining.
        var drainingPhase: Int?
        /// Keys waiting in every phase.
        var waiting = 0
        /// Entries in every phase's `deferred` array; `endDrain` has nothing to move when it is 0.
        var deferred = 0
    }

    let states: [PhaseState]
    /// The same states, unretained: `runPhase` borrows its state through this (`states` keeps
    /// them alive as long as the queue) instead of retaining and releasing it on every run.
    private let unretainedStates: [Unmanaged<PhaseState>]
    private let counts = ConfinedState(Counts())

    /// Creates a queue with `phases` (at least one), run in this order.
    public init(phases: [Phase]) {
        precondition(!phases.isEmpty, "PhasedQueue needs at least one phase")
        for phase in phases {
            if case let .nextRound(maxRounds) = phase.reentrancy {
                precondition(maxRounds >= 1, "PhasedQueue phase '\(phase.name)': maxRounds must be >= 1, got \(maxRounds)")
            }
        }
        states = phases.map { PhaseState($0) }
        unretainedStates = states.map { Unmanaged.passUnretained($0) }
    }

    /// The phases, in run order.
    public var phases: [Phase] { states.map(\.phase) }

    /// True when no key waits in any phase.
    public var isEmpty: Bool { counts.waiting == 0 }

    /// Number of keys waiting in all phases.
    public var count: Int { counts.waiting }

    /// True while `drain` (or a `beginDrain`/`endDrain` bracket) is running.
    public var isDraining: Bool { counts.drainingPhase != nil }

    /// Whether `key` is waiting in `phase`.
    public func contains(_ key: Key, phase: Int) -> Bool {
        isMember(key, states[checked(phase)], phase)
    }

    @inline(__always)
    private func isMember(_ key: Key, _ state: PhaseState, _ phase: Int) -> Bool {
        state.lists.members.contains(key, phase: phase)
    }

    /// Records `key` as waiting; false when it already was.
    @inline(__always)
    private func addMember(_ key: Key, _ state: PhaseState, _ phase: Int) -> Bool {
        state.lists.members.insert(key, phase: phase)
    }

    /// Records `key` as no longer waiting; false when it was not.
    @inline(__always)
    private func removeMember(_ key: Key, _ state: PhaseState, _ phase: Int) -> Bool {
        state.lists.members.remove(key, phase: phase)
    }

    /// Queues `key` for `phase`. Returns `false` when it was coalesced with a waiting entry.
    ///
    /// ```swift
    /// queue.enqueue("index", phase: 0, depth: 2)
    /// ```
    @discardableResult
    @inline(__always)
    public func enqueue(_ key: Key, phase: Int, depth: Int = 0) -> Bool {
        let state = states[checked(phase)]
        guard addMember(key, state, phase) else { return false }
        counts.waiting += 1
        let entry = Entry(key: key, depth: depth)
        if runsInThisDrain(phase, state) {
            state.lists.pending.append(entry)
        } else {
            state.lists.deferred.append(entry)
            counts.deferred += 1
        }
        return true
    }

    /// Whether a key enqueued into `phase` now would still run in the current drain
    /// (always true when not draining).
    public func willRunInThisDrain(phase: Int) -> Bool {
        runsInThisDrain(phase, states[checked(phase)])
    }

    @inline(__always)
    private func runsInThisDrain(_ phase: Int, _ state: PhaseState) -> Bool {
        guard let running = counts.drainingPhase else { return true }
        return phase > running || (phase == running && state.runsReentrantWorkThisDrain)
    }

    /// Runs every phase in order, calling `perform(phase, key)` for each waiting key.
    ///
    /// ```swift
    /// let reports = queue.drain { phase, key in handle(key, in: phase) }
    /// ```
    @discardableResult
    public func drain(_ perform: (_ phase: Int, _ key: Key) -> Void) -> [PhaseReport] {
        beginDrain()
        var reports: [PhaseReport] = []
        reports.reserveCapacity(states.count)
        for index in states.indices { reports.append(runPhase(index, perform)) }
        endDrain()
        return reports
    }

    // MARK: - Step-wise draining (the commit pipeline interleaves its own steps)

    /// Starts a drain; phases are then run with `runPhase` in increasing order, then `endDrain`.
    public func beginDrain() {
        precondition(counts.drainingPhase == nil, "PhasedQueue.beginDrain(): a drain is already running (drains do not nest)")
        counts.drainingPhase = -1
    }

    /// Runs one phase of the current drain. `phase` must be later than the last phase run.
    @discardableResult
    @inline(__always)
    public func runPhase(_ phase: Int, _ perform: (_ phase: Int, _ key: Key) -> Void) -> PhaseReport {
        guard let running = counts.drainingPhase else {
            preconditionFailure("PhasedQueue.runPhase(\(phase)) outside beginDrain()/endDrain()")
        }
        precondition(phase > running, "PhasedQueue.runPhase(\(phase)): phases run in increasing order (last was \(running))")
        counts.drainingPhase = phase
        return unretainedStates[checked(phase)]._withUnsafeGuaranteedRef { state in
            runRounds(of: state, phase, perform)
        }
    }

    @inline(__always)
    private func runRounds(of state: PhaseState, _ phase: Int, _ perform: (_ phase: Int, _ key: Key) -> Void) -> PhaseReport {
        var report = PhaseReport()
        let maxRounds = state.maxRounds
        while !state.lists.pending.isEmpty {
            if report.rounds == maxRounds {
                report.leftover = state.lists.pending.map(\.key)
                break
            }
            report.rounds += 1
            // The round runs from a local array (moved out of `state`, so no copy): iterating it
            // needs no reload or retain of the class's storage around each `perform` callout.
            var batch: [Entry] = []
            swap(&state.lists.pending, &batch)
            sort(&batch, of: state)
            // Shared (not copied) with `state.batch` so that `removeAll()` called from a handler
            // still sees the running round and un-registers its keys, which then are skipped.
            state.lists.batch = batch
            // Through a buffer pointer: a `for … in batch` loop would retain and release the array
            // (the local is mutated after it). The local keeps the buffer alive meanwhile.
            batch.withUnsafeBufferPointer { entries in
                for entry in entries {
                    // Removed from the members just before it runs: a re-enqueue by its own handler
                    // (or a later one) is new work, while a re-enqueue of a key still waiting in this
                    // round is coalesced into it.
                    let key = entry.key
                    guard removeMember(key, state, phase) else { continue }
                    counts.waiting -= 1
                    report.performed += 1
                    perform(phase, key)
                }
            }
            // Keep the emptied buffer for the next round's `pending`, unless `perform` already
            // started a new one there (re-entrant work).
            state.lists.batch = []
            batch.removeAll(keepingCapacity: true)
            if state.lists.pending.isEmpty { swap(&state.lists.pending, &batch) }
        }
        return report
    }

    /// Ends the current drain: work deferred to the next drain becomes pending.
    @inline(__always)
    public func endDrain() {
        precondition(counts.drainingPhase != nil, "PhasedQueue.endDrain() without beginDrain()")
        counts.drainingPhase = nil
        // Usually nothing was deferred: then not even the states are visited.
        guard counts.deferred != 0 else { return }
        counts.deferred = 0
        for state in states where !state.lists.deferred.isEmpty {
            state.lists.value.moveDeferredToPending()
        }
    }

    /// Removes `key` from `phase` if it is waiting there. Returns whether it was.
    @discardableResult
    public func remove(_ key: Key, phase: Int) -> Bool {
        let state = states[checked(phase)]
        guard removeMember(key, state, phase) else { return false }
        counts.waiting -= 1
        // Entries stay in the arrays; `runPhase` skips keys that are no longer members.
        return true
    }

    /// Drops every waiting key (used at thread exit so nothing stays retained).
    public func removeAll() {
        for (phase, state) in states.enumerated() {
            // Key by key: a membership kept in the keys themselves must be cleared there too.
            let lists = state.lists.value
            for entry in lists.pending + lists.deferred + lists.batch { _ = removeMember(entry.key, state, phase) }
            // The keys are released after the write, by the caller of `exchange`.
            _ = state.lists.exchange(PhaseLists())
        }
        counts.waiting = 0
        counts.deferred = 0
    }

    @inline(__always)
    private func sort(_ entries: inout [Entry], of state: PhaseState) {
        guard entries.count > 1 else { return }
        if let rankOf = state.rankOf {
            // Through a buffer pointer: `entries[index] = …` would check uniqueness per entry.
            // `entries` is this round's local array, which `rankOf` cannot reach.
            entries.withUnsafeMutableBufferPointer { buffer in
                for index in buffer.indices { buffer[index].depth = rankOf(buffer[index].key) }
            }
            sortByDepthUnlessSorted(&entries)
            return
        }
        switch state.phase.order {
        case .enqueueOrder, .rank:
            return
        case .depth:
            // Swift's sort is stable, so equal depths keep enqueue order.
            sortByDepthUnlessSorted(&entries)
        case let .custom(areInIncreasingOrder):
            entries.sort { areInIncreasingOrder($0.key, $1.key) }
        }
    }

    /// A stable sort by `depth` that first checks (one linear pass) whether the entries already
    /// are in order, as marks made in tree order are: then it skips the sort and its buffer.
    private func sortByDepthUnlessSorted(_ entries: inout [Entry]) {
        let sorted = entries.withUnsafeBufferPointer { buffer in
            var previous = buffer[0].depth
            for entry in buffer.dropFirst() {
                if entry.depth < previous { return false }
                previous = entry.depth
            }
            return true
        }
        if !sorted { entries.sort { $0.depth < $1.depth } }
    }

    @inline(__always)
    private func checked(_ phase: Int) -> Int {
        precondition(phase >= 0 && phase < states.count,
                     "PhasedQueue: no phase \(phase) (phases are 0..<\(states.count))")
        return phase
    }
}

