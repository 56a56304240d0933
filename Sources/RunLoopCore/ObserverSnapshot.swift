/// A mode's observers as its notifications call them (O4): for each activity, the observers
/// that asked for it, in the mode's order (O1), as unretained references that the snapshot
/// keeps alive.
///
/// A mode builds one the first time a run needs it after its observers changed
/// (`ModeState.observerSnapshotLocked`), and every run of the mode shares it until the next
/// change. It never changes: a run keeps the snapshot its notification started with, so an
/// observer that an earlier callout removed is still alive and still called (O5). A
/// notification reads only the observers of its own activity, with no lock and no retain.
final class ObserverSnapshot {
    /// Keeps the observers alive while `entries` refers to them.
    let observers: [LoopObserver]
    /// For the activity in bit `b`: `entries[starts[b] ..< starts[b + 1]]`.
    let entries: UnsafeMutablePointer<Unmanaged<LoopObserver>>
    let starts: UnsafeMutablePointer<Int>

    /// The activities are bits 0–7 (`Loop.Activity`); slots 3 and 4 stay empty.
    static let slotCount = 8
    /// The six activities a loop notifies; other bits of an observer's mask (as in
    /// `allActivities`) are never notified, so they take no entries.
    static let notified: UInt32 = [Loop.Activity.entry, .beforeTimers, .beforeSources,
                                   .beforeWaiting, .afterWaiting, .exit].reduce(0) { $0 | $1.rawValue }

    init(observers: [LoopObserver]) {
        self.observers = observers
        var total = 0
        for observer in observers {
            total += (observer.activities.rawValue & Self.notified).nonzeroBitCount
        }
        entries = .allocate(capacity: max(total, 1))
        starts = .allocate(capacity: Self.slotCount + 1)
        var next = 0
        for slot in 0..<Self.slotCount {
            starts[slot] = next
            let bit = (UInt32(1) << UInt32(slot)) & Self.notified
            for observer in observers where observer.activities.rawValue & bit != 0 {
                entries[next] = Unmanaged.passUnretained(observer)
                next += 1
            }
        }
        starts[Self.slotCount] = next
    }

    deinit {
        entries.deallocate()
        starts.deallocate()
    }
}
