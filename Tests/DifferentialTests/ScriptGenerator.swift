// A seeded, deterministic generator of operation scripts.
//
// Two kinds of scripts:
// - plain scripts (most): no timers; runs poll, return after a handled source, or wait a fixed
//   few milliseconds during which nothing else can happen (single thread), so the trace does not
//   depend on timing at all;
// - grid scripts: timers whose fire dates and run deadlines are distinct slots of a coarse time
//   grid, so every time-dependent event is at least one grid step away from any other.

/// SplitMix64: tiny, fast and the same on every platform, so a seed always means one script.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

struct ScriptGenerator {
    /// Milliseconds per slot for grid scripts: scheduled events are whole slots apart, and the
    /// CF executor rejects (and retries) a run whose callouts drift more than `gridBudgetMs`.
    static let gridMs = 20
    static let gridBudgetMs = 9
    static let horizonSlots = 12
    /// Share of scripts that use timers (they cost real time on CF).
    static let gridScriptPercent: UInt64 = 20

    private var rng: SplitMix64
    private var script: Script
    private let grid: Bool
    private var freeSlots: Set<Int>
    /// Sources that keep every mode non-empty in a grid script (never touched by operations).
    private var keeperSources: Set<Int> = []
    private var hasKeepers = false
    private var lastRunSlot = 0
    private var timerHome: [Int: Int] = [:]
    private let modeCount = ScriptMode.modeNames.count

    static func make(seed: UInt64) -> Script {
        var generator = ScriptGenerator(seed: seed)
        return generator.build()
    }

    private init(seed: UInt64) {
        rng = SplitMix64(seed: seed)
        grid = rng.next() % 100 < ScriptGenerator.gridScriptPercent
        script = Script(name: "random", seed: seed, gridMs: grid ? ScriptGenerator.gridMs : 0)
        freeSlots = Set(1...ScriptGenerator.horizonSlots)
    }

    // MARK: random helpers

    private mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    private mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }
    private mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    private mutating func anyMode(commonPercent: Int = 20) -> ScriptMode {
        chance(commonPercent) ? .common : .named(int(0...(modeCount - 1)))
    }
    private mutating func concreteMode() -> Int { int(0...(modeCount - 1)) }

    private mutating func takeSlot(after minimum: Int = 1) -> Int? {
        let candidates = freeSlots.filter { $0 >= minimum }.sorted()
        guard !candidates.isEmpty else { return nil }
        let slot = candidates[int(0...min(2, candidates.count - 1))]
        freeSlots.remove(slot)
        return slot
    }

    private var observerOrdersDistinct: Bool {
        Set(script.observers.map(\.order)).count == script.observers.count
    }

    private var touchableSources: [Int] { (0..<script.sources.count).filter { !keeperSources.contains($0) } }

    // MARK: building

    private mutating func build() -> Script {
        // Observers. In grid scripts CF may add spurious BT BS BW AW cycles (L-g); an observer
        // on those activities must then have no side effects, or the cycle could not be removed.
        for _ in 0..<int(1...4) {
            var mask: UInt32 = 0
            for activity in ScriptActivity.allCases where chance(45) { mask |= activity.rawValue }
            if mask == 0 { mask = pick(ScriptActivity.allCases).rawValue }
            let onlyEntryExit = mask & ~(ScriptActivity.entry.rawValue | ScriptActivity.exit.rawValue) == 0
            let mayAct = !grid || onlyEntryExit
            script.observers.append(ObserverSpec(activities: mask, repeats: mayAct ? !chance(20) : true,
                                                 order: int(-2...2)))
        }
        for _ in 0..<int(1...4) { script.sources.append(SourceSpec(order: int(-2...2))) }
        if grid {
            // Without keeper sources a mode may run empty; then CF's stale timerfd (L-g: it stays
            // readable after several overdue timers fired in one pass) would end a later run early
            // as Finished. So keeper-less scripts get a single timer with a single home mode.
            hasKeepers = chance(50)
            for _ in 0..<(hasKeepers ? int(1...3) : 1) { makeTimer() }
        }
        // Actions are generated once all items exist, so they may refer to any of them.
        for i in script.observers.indices {
            let o = script.observers[i]
            let onlyEntryExit = o.activities & ~(ScriptActivity.entry.rawValue | ScriptActivity.exit.rawValue) == 0
            if (!grid || onlyEntryExit) && chance(40) { script.observers[i].actions = actionTable(depth: 0) }
        }
        for i in script.sources.indices where chance(50) { script.sources[i].actions = actionTable(depth: 0) }
        for i in script.timers.indices where chance(50) { script.timers[i].actions = actionTable(depth: 0) }

        var steps: [ScriptOp] = []
        let earlyCommonMode = chance(30) ? int(1...(modeCount - 1)) : nil
        if hasKeepers {
            for mode in 0..<modeCount {
                keeperSources.insert(script.sources.count)
                script.sources.append(SourceSpec(order: 9))
                steps.append(.addSource(script.sources.count - 1, .named(mode)))
            }
        }
        for o in script.observers.indices {
            steps.append(.addObserver(o, anyMode()))
            if chance(25) { steps.append(.addObserver(o, anyMode())) }
        }
        for s in touchableSources {
            steps.append(.addSource(s, anyMode()))
            if chance(20) { steps.append(.addSource(s, anyMode())) }
        }
        for t in script.timers.indices { steps.append(.addTimer(t, timerMode(t))) }
        steps.shuffle(using: &rng)
        if let mode = earlyCommonMode { steps.insert(.addCommonMode(mode), at: 0) }

        let runCount = int(2...5)
        for _ in 0..<runCount {
            for _ in 0..<int(0...3) { steps.append(randomOp(depth: 0, topLevel: true)) }
            if chance(60), let s = touchableSources.randomElement(using: &rng) { steps.append(.signal(s)) }
            steps.append(topLevelRun())
        }
        script.steps = steps
        return script
    }

    private mutating func makeTimer() {
        guard let first = takeSlot() else { return }
        var interval = 0
        if chance(40) {
            let candidate = int(2...4)
            let points = stride(from: first + candidate, through: ScriptGenerator.horizonSlots, by: candidate)
            if points.allSatisfy({ freeSlots.contains($0) }) {
                interval = candidate
                for p in points { freeSlots.remove(p) }
            }
        }
        script.timers.append(TimerSpec(fireSlot: first, intervalSlots: interval))
    }

    /// A timer in several modes can leave a stale timerfd behind in CF (L-g); without keeper
    /// sources that could end a run early as Finished, so it then keeps a single home mode.
    private mutating func timerMode(_ t: Int) -> ScriptMode {
        if !hasKeepers {
            if let home = timerHome[t] { return .named(home) }
            let home = concreteMode()
            timerHome[t] = home
            return .named(home)
        }
        return anyMode(commonPercent: 30)
    }

    private mutating func topLevelRun() -> ScriptOp {
        let mode: ScriptMode = chance(2) ? .common : .named(concreteMode())
        let rash = chance(50)
        if grid {
            if chance(25) { return .run(mode, .poll, rash: rash) }
            if let slot = takeSlot(after: lastRunSlot + 1) {
                lastRunSlot = slot
                return .run(mode, .until(slot: slot), rash: rash)
            }
            return .run(mode, .poll, rash: rash)
        }
        switch int(0...9) {
        case 0...4: return .run(mode, .poll, rash: rash)
        case 5...7: return .run(mode, .relative(ms: 5), rash: rash)
        default: return .run(mode, .relative(ms: 10), rash: rash)
        }
    }

    private mutating func actionTable(depth: Int) -> ActionTable {
        var table: ActionTable = [:]
        for invocation in 1...3 where chance(invocation == 1 ? 80 : 25) {
            table[invocation] = (0..<int(1...2)).map { _ in randomOp(depth: depth + 1, topLevel: false) }
        }
        if table.isEmpty { table[1] = [randomOp(depth: depth + 1, topLevel: false)] }
        return table
    }

    private mutating func newBlock(depth: Int) -> Int {
        let id = script.blocks.count
        script.blocks.append(BlockSpec())
        if depth < 3 && chance(30) {
            let actions = (0..<int(1...2)).map { _ in randomOp(depth: depth + 1, topLevel: false) }
            script.blocks[id].actions = actions
        }
        return id
    }

    private mutating func blockTarget() -> BlockTarget {
        switch int(0...9) {
        case 0...5: return .mode(.named(concreteMode()))
        case 6...7: return .mode(.common)
        default:
            var list = Array(Set((0..<int(1...2)).map { _ in concreteMode() })).sorted()
            if list.isEmpty { list = [0] }
            return .modes(list)
        }
    }

    private mutating func randomOp(depth: Int, topLevel: Bool) -> ScriptOp {
        let sources = touchableSources
        let observers = script.observers.count
        while true {
            switch int(0...21) {
            case 0...4:
                if let s = sources.randomElement(using: &rng) { return .signal(s) }
            case 5...7:
                return .perform(block: newBlock(depth: depth), blockTarget())
            case 8:
                return .addObserver(int(0...(observers - 1)), anyMode())
            case 9:
                return .removeObserver(int(0...(observers - 1)), anyMode())
            case 10:
                if chance(40) { return .invalidateObserver(int(0...(observers - 1))) }
            case 11:
                if let s = sources.randomElement(using: &rng) { return .addSource(s, anyMode()) }
            case 12:
                if let s = sources.randomElement(using: &rng) { return .removeSource(s, anyMode()) }
            case 13:
                if let s = sources.randomElement(using: &rng), chance(50) { return .invalidateSource(s) }
            case 14:
                if !topLevel || chance(20) { return .stop }  // at top level: W1, a no-op
            case 15:
                if chance(50) { return .stopMode(concreteMode()) }
            case 16:
                if chance(40) { return .wakeUp }
            case 17:
                // CF copies the common items into a new common mode in CFSet (hash) order, so
                // observers with equal orders would get an arbitrary tie order there (M4).
                if chance(30) && observerOrdersDistinct { return .addCommonMode(int(1...(modeCount - 1))) }
            case 18, 19:
                // Nested runs in another mode from inside a callout.
                if !topLevel && depth <= 2 {
                    let mode = ScriptMode.named(concreteMode())
                    if grid, chance(60), let slot = takeSlot() { return .run(mode, .until(slot: slot), rash: chance(50)) }
                    return .run(mode, .poll, rash: chance(50))
                }
            case 20:
                if grid && !script.timers.isEmpty {
                    let t = int(0...(script.timers.count - 1))
                    if hasKeepers {
                        switch int(0...3) {
                        case 0: return .invalidateTimer(t)
                        case 1: return .removeTimer(t, anyMode())
                        case 2:
                            // One-shot timers only: a moved repeating timer's later ticks could
                            // land on a slot already used by another event.
                            if script.timers[t].intervalSlots == 0, let slot = takeSlot() {
                                return .setFireDate(t, slot: slot)
                            }
                        default: return .addTimer(t, anyMode(commonPercent: 30))
                        }
                    }
                    return .addTimer(t, timerMode(t))
                }
            default:
                if let s = sources.randomElement(using: &rng) { return .signal(s) }
            }
        }
    }
}
