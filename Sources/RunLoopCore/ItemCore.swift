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

/// The part every loop item shares: its id, its validity, the loop it is bound to, and the
/// lock that guards the item's mutable state.
///
/// Observers, timers, ports and fd sources live in one loop (O2, T2: an item added to a second
/// loop is refused); the core records that loop and how many of its modes hold the item. A
/// source0 may be in several loops at once (S5) and keeps its own list of them
/// (`LoopSource.homes`), using only the id, validity and lock of its core.
///
/// Lock order: a loop's lock may be held while taking an item's lock, never the reverse, so
/// an item never calls into a loop while holding its own lock; and a thread holds one item's
/// lock at a time (items share locks: `ItemLock`).
///
/// The object is 40 bytes, in a 48-byte malloc block: a service holds one per connection.
final class ItemCore: Sendable {
    /// The epoll token of a port or fd source, and the pick of the item's lock.
    let id: UInt64
    /// `nonisolated(unsafe)`, as every `var` here: only with `lock` held.
    nonisolated(unsafe) var valid = true
    /// Mirror of `valid` the loop reads without taking the item's lock.
    let validFlag = Atomic<Bool>(true)
    /// How many modes of `boundLoop` hold the item.
    nonisolated(unsafe) var boundModes: UInt32 = 0
    /// The loop the item was first added to, kept after it leaves every mode: its callout (a
    /// `sending` closure) then never runs on a second loop's thread while the first may still
    /// be inside it. Nil before the first add, and again once that loop is freed.
    nonisolated(unsafe) weak var boundLoop: Loop?

    init() { id = ProcessCounters.itemID() }

    /// The item's lock: computed from `id`, so no item stores one.
    var lock: ItemLock {
        @inline(__always) get { ItemLock(itemID: id) }
    }

    var isValid: Bool { validFlag.load(ordering: .acquiring) }

    /// The loop holding the valid item in some mode. Call with `lock` held.
    var firstLoopLocked: Loop? {
        guard valid, boundModes > 0 else { return nil }
        return boundLoop
    }

    /// The loop whose modes hold the item, valid or not (nil once that loop is freed). Call
    /// with `lock` held.
    var holdingLoopLocked: Loop? {
        guard boundModes > 0 else { return nil }
        return boundLoop
    }

    /// Whether `loop` may take the item: it is valid and not bound to another loop. Call with
    /// the loop's lock held.
    func accepts(_ loop: Loop) -> Bool {
        lock.withLock { acceptsLocked(loop) }
    }

    private func acceptsLocked(_ loop: Loop) -> Bool {
        guard valid else { return false }
        guard let bound = boundLoop else { return true }
        return bound === loop
    }

    /// Records one more concrete mode of `loop` holding the item; false if refused.
    func bind(_ loop: Loop) -> Bool {
        lock.withLock {
            guard acceptsLocked(loop) else { return false }
            // A first loop, or a new one after the first was freed (which held it in no mode
            // any more): the count starts again.
            if boundLoop !== loop { boundModes = 0 }
            boundLoop = loop
            boundModes += 1
            return true
        }
    }

    /// Records that one concrete mode of `loop` dropped the item.
    func unbind(_ loop: Loop) {
        lock.withLock {
            if boundModes > 0 && boundLoop === loop { boundModes -= 1 }
        }
    }

    /// Clears `valid` and, in the same critical section, returns what `then` returns; nil if
    /// the item was invalid already.
    func invalidate<Result>(then: () -> Result) -> Result? {
        lock.withLock {
            guard valid else { return nil }
            valid = false
            validFlag.store(false, ordering: .releasing)
            return then()
        }
    }

    /// Clears `valid`, runs `clear` under the lock, and returns the loops to purge the item
    /// from; nil if it was invalid already.
    func invalidate(also clear: () -> Void = {}) -> [Loop]? {
        invalidate { () -> [Loop] in
            clear()
            return loopsLocked
        }
    }

    /// The bound loop while some of its modes hold the item (freed loops left out). Call with
    /// `lock` held.
    var loopsLocked: [Loop] {
        guard boundModes > 0, let loop = boundLoop else { return [] }
        return [loop]
    }
}
