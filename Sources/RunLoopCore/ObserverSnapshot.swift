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
    /// The mode's `observersVersion` when this snapshot was built.
    let version: UInt64
    /// For the activity in bit `b`: `entries[starts[b] ..< starts[b + 1]]`.
    let entries: UnsafeMutablePointer<Unmanaged<LoopObserver>>
    let starts: UnsafeMutablePointer<Int>

    /// The activities are the bits 0–7 (`Loop.Activity`); an observer of `allActivities`
    /// appears in each of the six slots CF notifies.
    static let slotCount = 8

    init(observers: [LoopObserver], version: UInt64) {
        self.observers = observers
        self.version = version
        var total = 0
        for observer in observers {
            total += (observer.activities.rawValue & 0xFF).nonzeroBitCount
        }
        entries = .allocate(capacity: max(total, 1))
        starts = .allocate(capacity: Self.slotCount + 1)
        var next = 0
        for slot in 0..<Self.slotCount {
            starts[slot] = next
            let bit = UInt32(1) << UInt32(slot)
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
