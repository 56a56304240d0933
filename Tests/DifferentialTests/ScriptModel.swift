// The operation-script model shared by the generator, both executors and the comparator.
// A script is plain data (Sendable) so it can be printed next to a mismatch and replayed.

import RunLoopCore

/// A mode as a script names it. Index 0 is the default mode; `.common` is the pseudo-mode.
enum ScriptMode: Hashable, Sendable, CustomStringConvertible {
    case named(Int)
    case common

    static let modeNames = ["kCFRunLoopDefaultMode", "M1", "M2"]
    static let `default` = ScriptMode.named(0)

    /// Short name used in traces ("def", "M1", "M2", "common").
    var description: String {
        switch self {
        case .named(0): return "def"
        case .named(let i): return ScriptMode.modeNames[i]
        case .common: return "common"
        }
    }
}

/// Activity bits with CF's raw values (1, 2, 4, 32, 64, 128).
enum ScriptActivity: UInt32, CaseIterable, Sendable {
    case entry = 1, beforeTimers = 2, beforeSources = 4, beforeWaiting = 32, afterWaiting = 64, exit = 128

    /// E, BT, BS, BW, AW, X: the loop's own trace names, so both executors print alike.
    var short: String { Loop.Activity(rawValue: rawValue).shortName }

    static func from(raw: UInt32) -> ScriptActivity? { ScriptActivity(rawValue: raw) }
}

/// How long a run may last.
/// - `poll`: timeout 0 (one pass, never sleeps).
/// - `relative`: a fixed number of milliseconds; used only where nothing else is time dependent.
/// - `until`: ends at grid slot `slot` of the script clock (timer scripts); the executor passes
///   `slot·grid − now`, so both loops end the run at the same point of the script's time grid.
enum RunTimeout: Hashable, Sendable, CustomStringConvertible {
    case poll
    case relative(ms: Int)
    case until(slot: Int)

    var description: String {
        switch self {
        case .poll: return "0"
        case .relative(let ms): return "\(ms)ms"
        case .until(let slot): return "@\(slot)"
        }
    }
}

/// Where a block goes: one mode (possibly the common pseudo-mode) or a set of concrete modes.
enum BlockTarget: Hashable, Sendable, CustomStringConvertible {
    case mode(ScriptMode)
    case modes([Int])

    var description: String {
        switch self {
        case .mode(let m): return "\(m)"
        case .modes(let list): return "[" + list.map { ScriptMode.named($0).description }.joined(separator: ",") + "]"
        }
    }
}

/// One operation. Top-level steps run on the loop thread while no run is active; the same
/// operations run as the actions of callouts.
indirect enum ScriptOp: Hashable, Sendable, CustomStringConvertible {
    case addObserver(Int, ScriptMode)
    case removeObserver(Int, ScriptMode)
    case invalidateObserver(Int)
    case addSource(Int, ScriptMode)
    case removeSource(Int, ScriptMode)
    case signal(Int)
    case invalidateSource(Int)
    case addTimer(Int, ScriptMode)
    case removeTimer(Int, ScriptMode)
    case invalidateTimer(Int)
    /// Moves a timer's next fire date to a grid slot (a past slot means "as soon as possible").
    case setFireDate(Int, slot: Int)
    case perform(block: Int, BlockTarget)
    case stop
    case stopMode(Int)
    case wakeUp
    case addCommonMode(Int)
    case run(ScriptMode, RunTimeout, rash: Bool)

    var description: String {
        switch self {
        case .addObserver(let o, let m): return "add o\(o) \(m)"
        case .removeObserver(let o, let m): return "remove o\(o) \(m)"
        case .invalidateObserver(let o): return "invalidate o\(o)"
        case .addSource(let s, let m): return "add s\(s) \(m)"
        case .removeSource(let s, let m): return "remove s\(s) \(m)"
        case .signal(let s): return "signal s\(s)"
        case .invalidateSource(let s): return "invalidate s\(s)"
        case .addTimer(let t, let m): return "add t\(t) \(m)"
        case .removeTimer(let t, let m): return "remove t\(t) \(m)"
        case .invalidateTimer(let t): return "invalidate t\(t)"
        case .setFireDate(let t, let slot): return "setNextFireDate t\(t) @\(slot)"
        case .perform(let b, let target): return "perform b\(b) \(target)"
        case .stop: return "stop"
        case .stopMode(let m): return "stopMode \(ScriptMode.named(m))"
        case .wakeUp: return "wakeUp"
        case .addCommonMode(let m): return "addCommonMode \(ScriptMode.named(m))"
        case .run(let m, let t, let rash): return "run \(m) t=\(t)\(rash ? " rash" : "")"
        }
    }
}

/// Actions an item performs on given invocations (1-based), so every chain of callouts ends.
typealias ActionTable = [Int: [ScriptOp]]

struct ObserverSpec: Hashable, Sendable {
    var activities: UInt32
    var repeats: Bool
    var order: Int
    var actions: ActionTable = [:]
}

struct SourceSpec: Hashable, Sendable {
    var order: Int
    var actions: ActionTable = [:]
}

/// A timer fires first at grid slot `fireSlot`; `intervalSlots` 0 means one-shot.
struct TimerSpec: Hashable, Sendable {
    var fireSlot: Int
    var intervalSlots: Int
    var actions: ActionTable = [:]
}

struct BlockSpec: Hashable, Sendable {
    var actions: [ScriptOp] = []
}

/// A complete script: the items it may use and the top-level steps.
struct Script: Sendable, CustomStringConvertible {
    var name: String
    var seed: UInt64
    /// Milliseconds per grid slot (timer scripts); 0 when the script has no `until` timeouts.
    var gridMs: Int
    var observers: [ObserverSpec] = []
    var sources: [SourceSpec] = []
    var timers: [TimerSpec] = []
    var blocks: [BlockSpec] = []
    var steps: [ScriptOp] = []

    var usesTimeGrid: Bool { gridMs > 0 }

    var description: String {
        var lines = ["script \(name) seed=\(seed) grid=\(gridMs)ms"]
        func acts(_ table: ActionTable) -> String {
            table.keys.sorted().map { k in "#\(k){" + table[k]!.map(\.description).joined(separator: "; ") + "}" }
                .joined(separator: " ")
        }
        for (i, o) in observers.enumerated() {
            let names = ScriptActivity.allCases.filter { o.activities & $0.rawValue != 0 }.map(\.short)
            lines.append("  o\(i): \(names.joined(separator: "|")) order=\(o.order)\(o.repeats ? "" : " once") \(acts(o.actions))")
        }
        for (i, s) in sources.enumerated() { lines.append("  s\(i): order=\(s.order) \(acts(s.actions))") }
        for (i, t) in timers.enumerated() {
            lines.append("  t\(i): @\(t.fireSlot)\(t.intervalSlots > 0 ? " every \(t.intervalSlots)" : "") \(acts(t.actions))")
        }
        for (i, b) in blocks.enumerated() where !b.actions.isEmpty {
            lines.append("  b\(i): {" + b.actions.map(\.description).joined(separator: "; ") + "}")
        }
        lines.append("  steps:")
        for step in steps { lines.append("    \(step)") }
        return lines.joined(separator: "\n")
    }
}
