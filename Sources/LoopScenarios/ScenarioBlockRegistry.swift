import PThreads
import RunLoopKit

/// The closures of a scenario's cross-thread blocks, by the stable label the scenario gives each
/// input. A trace file holds the label, never the closure: the scenario registers the closure
/// once, before the thread that enqueues it starts, and whoever enqueues it (that thread live,
/// the replay driver in a replay) takes it from here.
///
/// ```swift
/// inputs.blocks.register("reply", calloutLabel: "completionHandler") { print("200 OK") }
/// ```
package final class ScenarioBlockRegistry: Sendable {
    /// One registered block: the label its callout carries, and its work.
    package struct Block: Sendable {
        package let calloutLabel: String
        package let work: @Sendable () -> Void
    }

    private let blocks = Locked<[String: Block]>([:])
    private let registered = PThreadCondition()
    /// Replacements a replay uses instead of what the scenario registers (to see what a changed
    /// block does to the trace).
    private let replacements: [String: @Sendable () -> Void]

    init(replacing replacements: [String: @Sendable () -> Void] = [:]) {
        self.replacements = replacements
    }

    /// Registers the block for input `label`; its callout is labelled `calloutLabel`. Each
    /// label is registered once per run: a second registration replaces a block not yet taken.
    package func register(_ label: String, calloutLabel: String, _ work: @escaping @Sendable () -> Void) {
        let block = Block(calloutLabel: calloutLabel, work: replacements[label] ?? work)
        blocks.withLock { $0[label] = block }
        registered.broadcast()
    }

    /// Takes the block registered under `label`, waiting up to `limit` (real time) for the
    /// scenario to register it; nil when it was not registered in time.
    func take(_ label: String, limit: Duration = .seconds(10)) -> Block? {
        let deadline = MonotonicClock.shared.now.advanced(by: limit).nanoseconds
        var taken: Block?
        _ = blocks.wait(on: registered, untilMonotonicNanoseconds: deadline) { blocks in
            taken = blocks.removeValue(forKey: label)
            return taken != nil
        }
        return taken
    }
}
