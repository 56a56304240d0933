#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Read-only questions RunLoopTesting's virtual-loop test asks between the runs it drives: is
// there a block or job a pass of the mode would run now, when would the mode's wait end for its
// timers, and what is the calling thread's name (for its reports). `package`: the testing
// toolkit's, not public API.

extension Loop {
    /// Whether a `perform` block or an executor job is queued that a pass of `mode` would run
    /// (B2: one that targets `mode` itself, or `.common` while `mode` is common). Takes the
    /// lock only when something is queued at all.
    package func hasPendingBlocks(for mode: Loop.Mode) -> Bool {
        guard mirrors.hasBlocks else { return false }
        return lock.withLock { held in
            let isCommon = held.loop.commonModeNames.contains(mode)
            return held.loop.queues.blocks.contains { $0.matches(named: mode, isCommon: isCommon) }
        }
    }

    /// Where a wait in `mode` would jump a virtual clock for the mode's timers: the deadline its
    /// timer descriptor is armed at (T3: the earliest fire date of a timer not firing now,
    /// deferred by tolerance to the latest fire date every earlier timer still accepts, T8);
    /// nil when no timer is scheduled in it.
    package func timerWakeDeadline(in mode: Loop.Mode) -> UInt64? {
        lock.withLock { held in
            guard !held.loop.tornDown, let state = held.loop.modes[mode] else { return nil }
            let deadline = state.armedDeadline(held)
            return deadline == .max ? nil : deadline
        }
    }
}

extension Loop {
    /// The calling thread's name (for reports naming the thread an input came from).
    package static var currentThreadName: String { threadName(pthread_self()) }
}
