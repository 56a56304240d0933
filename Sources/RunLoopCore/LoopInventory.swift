// What a loop still holds, read in one critical section: the package's testing toolkit names
// the items, blocks and async work a test left behind. Read-only; `package`, not public API.

/// The items of one mode, each kind in the loop's own order.
package struct LoopModeInventory {
    package let mode: Loop.Mode
    package let observers: [LoopObserver]
    package let sources0: [LoopSource]
    package let ports: [LoopPortSource]
    package let fileSources: [LoopFileSource]
    /// Sorted by fire date (T2).
    package let timers: [LoopTimer]
}

/// Every mode's items plus the work queued for later passes.
package struct LoopInventory {
    /// In mode creation order (M1).
    package let modes: [LoopModeInventory]
    /// `perform` blocks and executor jobs not yet run (B1), in queue order: each label with the
    /// modes it targets (`.common` stands for every common mode, as B2 reads it).
    package let pendingBlocks: [(label: String, modes: [Loop.Mode])]
    /// Labels of `submit` work not yet drained (X4), in queue order.
    package let pendingAsyncLabels: [String]
}

extension Loop {
    /// A snapshot of everything the loop holds now.
    package var inventory: LoopInventory {
        lock.withLock { held in
            let modes = held.loop.modeOrder.compactMap { name -> LoopModeInventory? in
                guard let state = held.loop.modes[name] else { return nil }
                return LoopModeInventory(
                    mode: name, observers: held[state].observers, sources0: held[state].sources0,
                    ports: held[state].ports.values.sorted { $0.core.id < $1.core.id },
                    fileSources: held[state].files.values.sorted { $0.core.id < $1.core.id },
                    timers: held[state].timers.inFiringOrder)
            }
            let blocks = held.loop.queues.blocks.map { block in (label: block.label, modes: block.target.modes) }
            return LoopInventory(modes: modes, pendingBlocks: blocks,
                                 pendingAsyncLabels: held.loop.queues.asyncWork.map(\.label))
        }
    }
}
