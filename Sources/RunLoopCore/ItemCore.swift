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
/// an item never calls into a loop while holding its own lock; and a thread holds one item's
/// lock at a time (items share locks: `ItemLock`).
final class ItemCore: Sendable {
    struct Home {
        weak var loop: Loop?
        /// Concrete modes of `loop` that hold the item.
        var count: Int
    }

    let id: UInt64
    /// One of the lock stripes the items share (see `ItemLock`), not a mutex of its own.
    let lock: ItemLock
    /// Observers, timers, ports and fd sources live in one loop (O2, T2); sources0 may be in
    /// several (S5).
    let allowsSeveralLoops: Bool
    /// `nonisolated(unsafe)`, as every `var` here: only with `lock` held.
    nonisolated(unsafe) var valid = true
    /// Mirror of `valid` the loop reads without taking the item's lock.
    let validFlag = Atomic<Bool>(true)
    /// How many modes of `boundLoop` hold a single-loop item. 32 bits, next to the flags: the
    /// object stays 56 bytes, in a 64-byte malloc block.
    nonisolated(unsafe) var boundModes: UInt32 = 0
    /// The loops of an item that may be in several (a source0), with how many of each one's
    /// modes hold it. A single-loop item keeps `boundLoop` and `boundModes` instead: an array
    /// of one home is an allocation of its own, 48 bytes of every fd source a service holds per
    /// connection.
    nonisolated(unsafe) var homes: [Home] = []

    /// The first loop holding the valid item. Call with `lock` held.
    var firstLoopLocked: Loop? {
        guard valid else { return nil }
        if allowsSeveralLoops { return homes.first?.loop }
        return boundModes > 0 ? boundLoop : nil
    }
    /// The loop a single-loop item was first added to, kept after it leaves every mode: its
    /// callout (a `sending` closure) then never runs on a second loop's thread while the first
    /// may still be inside it. Nil before the first add, and again once that loop is freed.
    nonisolated(unsafe) weak var boundLoop: Loop?

    init(allowsSeveralLoops: Bool) {
        id = ProcessCounters.itemID()
        lock = ItemLock(itemID: id)
        self.allowsSeveralLoops = allowsSeveralLoops
    }

    var isValid: Bool { validFlag.load(ordering: .acquiring) }

    /// Whether `loop` may take the item: it is valid and not bound to another loop (unless
    /// several are allowed). Call with the loop's lock held.
    func accepts(_ loop: Loop) -> Bool {
        lock.withLock { acceptsLocked(loop) }
    }

    private func acceptsLocked(_ loop: Loop) -> Bool {
        guard valid else { return false }
        if allowsSeveralLoops { return true }
        guard let bound = boundLoop else { return true }
        return bound === loop
    }

    /// Records one more concrete mode of `loop` holding the item; false if refused.
    func bind(_ loop: Loop) -> Bool {
        lock.withLock {
            guard acceptsLocked(loop) else { return false }
            guard allowsSeveralLoops else {
                // A first loop, or a new one after the first was freed (which held it in no
                // mode any more): the count starts again.
                if boundLoop !== loop { boundModes = 0 }
                boundLoop = loop
                boundModes += 1
                return true
            }
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
            guard allowsSeveralLoops else {
                if boundModes > 0 && boundLoop === loop { boundModes -= 1 }
                return
            }
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
            return loopsLocked
        }
    }

    /// The loops whose modes hold the item (freed ones left out). Call with `lock` held.
    var loopsLocked: [Loop] {
        if allowsSeveralLoops { return homes.compactMap(\.loop) }
        guard boundModes > 0, let loop = boundLoop else { return [] }
        return [loop]
    }
}
