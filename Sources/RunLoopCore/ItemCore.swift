import PThreads
import Synchronization

/// Process-wide counters: unique item ids (epoll tokens) and source0 signal order.
enum ProcessCounters {
    /// Tokens below 16 are reserved for the loop's own descriptors (see `WaitToken`).
    private static let nextID = Atomic<UInt64>(16)
    private static let nextSignal = Atomic<UInt64>(1)

    static func itemID() -> UInt64 { nextID.wrappingAdd(1, ordering: .relaxed).oldValue }
    /// A strictly increasing stamp; S2 breaks order ties by it (CF uses the signal time).
    static func signalStamp() -> UInt64 { nextSignal.wrappingAdd(1, ordering: .relaxed).oldValue }
}

/// The part every loop item shares: validity, the loops it belongs to, and the lock that
/// guards the item's mutable state.
///
/// Lock order: a loop's lock may be held while taking an item's lock, never the reverse, so
/// an item never calls into a loop while holding its own lock.
final class ItemCore: Sendable {
    struct Home {
        weak var loop: Loop?
        /// Concrete modes of `loop` that hold the item.
        var count: Int
    }

    let lock = PThreadMutex()
    let id = ProcessCounters.itemID()
    /// Observers, timers, ports and fd sources live in one loop (O2, T2); sources0 may be in
    /// several (S5).
    let allowsSeveralLoops: Bool
    /// `nonisolated(unsafe)`, as every `var` here: only with `lock` held.
    nonisolated(unsafe) var valid = true
    /// Mirror of `valid` the loop reads without taking the item's lock.
    let validFlag = Atomic<Bool>(true)
    /// `@exclusivity(unchecked)`: `lock` serialises it, and every re-arm of a timer reads it
    /// (the run-time check cost about 80 instructions there).
    @exclusivity(unchecked) nonisolated(unsafe) var homes: [Home] = []

    /// The first loop holding the valid item. A single-loop item (a timer, a port) answers with
    /// `boundLoop`, the loop of its only home: reading `homes.first` copies a `Home` and its weak
    /// reference, which cost a timer's re-arm about 130 instructions. Call with `lock` held.
    var firstLoopLocked: Loop? {
        guard valid, !homes.isEmpty else { return nil }
        return allowsSeveralLoops ? homes[0].loop : boundLoop
    }
    /// The loop a single-loop item was first added to, kept after it leaves every mode: its
    /// callout (a `sending` closure) then never runs on a second loop's thread while the first
    /// may still be inside it. Nil before the first add, and again once that loop is freed.
    nonisolated(unsafe) weak var boundLoop: Loop?

    init(allowsSeveralLoops: Bool) { self.allowsSeveralLoops = allowsSeveralLoops }

    var isValid: Bool { validFlag.load(ordering: .acquiring) }

    /// Whether `loop` may take the item: it is valid and not bound to another loop (unless
    /// several are allowed). Call with the loop's lock held.
    func accepts(_ loop: Loop) -> Bool {
        lock.withLock { acceptsLocked(loop) }
    }

    private func acceptsLocked(_ loop: Loop) -> Bool {
        guard valid else { return false }
        if allowsSeveralLoops { return true }
        homes.removeAll { $0.loop == nil }
        guard let bound = boundLoop else { return true }
        return bound === loop
    }

    /// Records one more concrete mode of `loop` holding the item; false if refused.
    func bind(_ loop: Loop) -> Bool {
        lock.withLock {
            guard acceptsLocked(loop) else { return false }
            if !allowsSeveralLoops { boundLoop = loop }
            if let i = homes.firstIndex(where: { $0.loop === loop }) {
                homes[i].count += 1
            } else {
                homes.append(Home(loop: loop, count: 1))
            }
            return true
        }
    }

    /// Records that one concrete mode of `loop` dropped the item.
    func unbind(_ loop: Loop) {
        lock.withLock {
            guard let i = homes.firstIndex(where: { $0.loop === loop }) else { return }
            homes[i].count -= 1
            if homes[i].count <= 0 { homes.remove(at: i) }
        }
    }

    /// Clears `valid` and returns the loops to purge the item from; nil if it was invalid already.
    func invalidate(also clear: () -> Void = {}) -> [Loop]? {
        lock.withLock {
            guard valid else { return nil }
            valid = false
            validFlag.store(false, ordering: .releasing)
            clear()
            return homes.compactMap(\.loop)
        }
    }
}
