import CRunLoopShims
import PThreads

/// The lock that guards one loop item's state (its validity, its loops, a timer's date, a
/// port's queue…): one of a static table of 256 mutexes (`rlk_item_lock_stripes`), picked by
/// the item's id.
///
/// A mutex of its own cost every item two heap blocks and a pointer, 88 bytes: more than a third
/// of an fd source, which a service holds one of per connection. Items share the table's
/// mutexes instead; two items on the same one only wait for each other's short critical
/// sections. What makes sharing safe is the lock order, which was already the items' rule: a
/// thread holds at most one item's lock at a time, and never takes a loop's lock while holding
/// one (a loop's lock may be held while an item's is taken). Debug builds check both, the first
/// here at every `lock()` and the second at every `LoopLock.lock()`; the whole test suite runs
/// with the checks.
struct ItemLock {
    private let mutex: LentMutex

    /// The lock of the item numbered `itemID` (ids are consecutive, so neighbours differ).
    @inline(__always)
    init(itemID: UInt64) { mutex = LentMutex(unsafeMutex: rlk_item_lock(itemID)) }

    @inline(__always)
    func lock() {
        #if DEBUG
        let held = rlk_item_locks_held()!
        precondition(held.pointee == 0, "an item's lock taken while this thread holds another: items share locks, so this can deadlock")
        held.pointee += 1
        #endif
        mutex.lock()
    }

    @inline(__always)
    func unlock() {
        mutex.unlock()
        #if DEBUG
        rlk_item_locks_held()!.pointee -= 1
        #endif
    }

    /// Runs `body` with the lock held.
    @inline(__always)
    func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits on `condition`, with the lock held, until woken or `deadline` (nanoseconds of
    /// `CLOCK_MONOTONIC`, `.max`: none); false when the deadline passed. The lock stays this
    /// thread's for the check above: it has it back when the wait returns.
    func wait(on condition: PThreadCondition, untilMonotonicNanoseconds deadline: UInt64) -> Bool {
        condition.wait(mutex, untilMonotonicNanoseconds: deadline)
    }
}
