import Synchronization

/// Where one timer sits in one mode's queue. The timer keeps one slot per mode holding it
/// (`LoopTimer.placements`, written with the loop's lock and the timer's held); `index`
/// follows the entry as the heap moves it (under the loop's lock).
final class TimerSlot: Sendable {
    /// `Loop.identity` of the loop whose mode holds the timer.
    let loopID: UInt64
    /// `ModeState.id` of that mode.
    let modeID: UInt64
    /// The mode itself, unretained: the loop keeps its modes for its lifetime (M1), and the
    /// slot is only followed by that loop (checked with `loopID`).
    let mode: Unmanaged<ModeState>
    /// `@exclusivity(unchecked)`: the loop's lock serialises access; every heap move writes it.
    /// `nonisolated(unsafe)`: the owning loop's lock serialises it (every heap move writes it).
    @exclusivity(unchecked) nonisolated(unsafe) var index = 0

    init(loopID: UInt64, mode: ModeState) {
        self.loopID = loopID
        self.modeID = mode.id
        self.mode = Unmanaged.passUnretained(mode)
    }
}

/// One queued timer: its fire date, an insertion sequence number that breaks ties (T2), and
/// its effective tolerance (T8), copied from the timer under its lock whenever they change, so
/// the pass and `rearm` read no timer lock.
struct TimerQueueEntry {
    var date: UInt64
    var sequence: UInt64
    var tolerance: UInt64
    /// The queue's reference to the timer (it keeps the timer alive while queued).
    let timer: LoopTimer
    /// The same timer and its core, read without reference counting (`isEligible`): loading
    /// `timer.core` from the strong reference would retain the core on every visit.
    let unretained: Unmanaged<LoopTimer>
    let unretainedCore: Unmanaged<ItemCore>
    /// Kept alive by `timer.placements` while the entry is queued.
    let slot: Unmanaged<TimerSlot>

    init(date: UInt64, sequence: UInt64, tolerance: UInt64, timer: LoopTimer, slot: Unmanaged<TimerSlot>) {
        self.date = date
        self.sequence = sequence
        self.tolerance = tolerance
        self.timer = timer
        self.unretained = Unmanaged.passUnretained(timer)
        self.unretainedCore = Unmanaged.passUnretained(timer.core)
        self.slot = slot
    }

    @inline(__always)
    func precedes(_ other: TimerQueueEntry) -> Bool {
        date < other.date || (date == other.date && sequence < other.sequence)
    }

    /// Not firing and not invalidated (T4, T8): what the pass fires and the wake-up counts.
    /// Static over the buffer: an instance property would copy the entry, retaining its timer.
    @inline(__always)
    static func isEligible(_ buffer: UnsafeBufferPointer<TimerQueueEntry>, _ index: Int) -> Bool {
        buffer[index].unretainedCore._withUnsafeGuaranteedRef { $0.isValid }
            && buffer[index].unretained._withUnsafeGuaranteedRef { !$0.firing }
    }
}

/// A due timer picked by the pass, in (date, sequence) order. The timer is lent by the mode's
/// queue, not retained (a retain and a release are two locked instructions on every fire): a
/// timer the queue lets go while a pass of the mode fires timers waits in the mode until the
/// pass ends (`ModeGuardedState.parkedTimers`).
struct DueTimer {
    let date: UInt64
    let sequence: UInt64
    let timer: Unmanaged<LoopTimer>
}

/// A mode's timers (T2): a binary min-heap on (fire date, insertion sequence), so adding,
/// removing and moving a timer cost O(log n), the next fire date is the root, and a pass
/// visits only the timers that are due — never every timer of the mode. A timer moved
/// (`update`) takes a new sequence number, so among timers of one date it counts as inserted
/// last, as CF re-inserts it. Loop lock held for everything.
struct TimerQueue {
    private(set) var entries: [TimerQueueEntry] = []
    private var nextSequence: UInt64 = 0
    /// `wakeDeadline`'s candidates; kept for its capacity.
    private var group: [TimerQueueEntry] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }
    /// The timer of the earliest (date, sequence), eligible or not (T9).
    var first: LoopTimer? { entries.first?.timer }

    /// Every timer, in the order they fire (fire date, then insertion): for inventories, not the pass.
    var inFiringOrder: [LoopTimer] {
        entries.sorted { $0.precedes($1) }.map(\.timer)
    }

    mutating func insert(_ timer: LoopTimer, date: UInt64, tolerance: UInt64, slot: TimerSlot) {
        let entry = TimerQueueEntry(date: date, sequence: nextSequence, tolerance: tolerance, timer: timer,
                                    slot: Unmanaged.passUnretained(slot))
        nextSequence &+= 1
        entries.append(entry)
        slot.index = entries.count - 1
        siftUp(entries.count - 1)
    }

    /// Takes out the entry at `index` (a slot's index), returning the queue's reference to
    /// its timer.
    mutating func remove(at index: Int) -> LoopTimer {
        let last = entries.count - 1
        if index != last {
            entries.withUnsafeMutableBufferPointer { $0.swapAt(index, last) }
            entries[index].slot._withUnsafeGuaranteedRef { $0.index = index }
        }
        let removed = entries.removeLast()
        if index < entries.count { restore(index) }
        return removed.timer
    }

    /// Moves the entry at `index` to a new date and tolerance; it counts as inserted now (T2).
    mutating func update(at index: Int, date: UInt64, tolerance: UInt64) {
        entries.withUnsafeMutableBufferPointer { buffer in
            buffer[index].date = date
            buffer[index].tolerance = tolerance
            buffer[index].sequence = nextSequence
        }
        nextSequence &+= 1
        restore(index)
    }

    /// Empties the queue, returning the timers (teardown).
    mutating func removeAll() -> [LoopTimer] {
        defer { entries.removeAll() }
        return entries.map(\.timer)
    }

    /// The entries as a buffer, for the pass's reads. Through mutable access on purpose: the
    /// queue lives in a class (`ModeState`), and a read-only `withUnsafeBufferPointer` would
    /// retain the array around `body`; mutable access proves nobody else can change it, so it
    /// costs a uniqueness check instead (the queue never shares its array).
    @inline(__always)
    private mutating func withEntries<R>(_ body: (UnsafeBufferPointer<TimerQueueEntry>) -> R) -> R {
        entries.withUnsafeMutableBufferPointer { body(UnsafeBufferPointer($0)) }
    }

    /// Appends every eligible timer due at `now` to `due`, in (date, sequence) order (T4).
    /// Visits the due part of the heap only. Returns the earliest date in the queue after
    /// `now` (`.max` when none; firing timers count too, which can only make it earlier): any
    /// `now` before it would have collected the same timers.
    @discardableResult
    mutating func collectDue(now: UInt64, into due: inout [DueTimer]) -> UInt64 {
        guard let root = entries.first?.date else { return .max }
        guard root <= now else { return root }
        let start = due.count
        var beyond = UInt64.max
        withEntries { Self.collectDue($0, from: 0, now: now, into: &due, beyond: &beyond) }
        Self.sortByDate(&due, from: start)
        return beyond
    }

    /// Depth-first over the entries due at `now`: a subtree whose root is not due holds none,
    /// and the earliest date after `now` is among those roots (a heap's children come later).
    private static func collectDue(_ buffer: UnsafeBufferPointer<TimerQueueEntry>, from i: Int, now: UInt64,
                                   into due: inout [DueTimer], beyond: inout UInt64) {
        guard i < buffer.count else { return }
        guard buffer[i].date <= now else {
            beyond = min(beyond, buffer[i].date)
            return
        }
        if TimerQueueEntry.isEligible(buffer, i) {
            due.append(DueTimer(date: buffer[i].date, sequence: buffer[i].sequence, timer: buffer[i].unretained))
        }
        collectDue(buffer, from: 2 * i + 1, now: now, into: &due, beyond: &beyond)
        collectDue(buffer, from: 2 * i + 2, now: now, into: &due, beyond: &beyond)
    }

    /// When the mode's timer descriptor should fire (T3, T8): with `hard` = the earliest
    /// eligible fire date plus its effective tolerance, going through the eligible timers in
    /// date order, `hard` shrinks to each one's date + tolerance and the wake is the latest
    /// date still ≤ `hard`. Only timers dated ≤ the first `hard` can matter, so only those
    /// are visited; with no tolerance on the earliest timer that is its date at once.
    mutating func wakeDeadline() -> UInt64 {
        let (found, earliestDate, earliestTolerance) = withEntries { buffer in
            guard !buffer.isEmpty else { return (false, UInt64.max, UInt64(0)) }
            let index = TimerQueueEntry.isEligible(buffer, 0) ? 0 : Self.earliestEligible(buffer)
            guard index >= 0 else { return (false, UInt64.max, UInt64(0)) }
            return (true, buffer[index].date, buffer[index].tolerance)
        }
        guard found else { return .max }
        if earliestTolerance == 0 { return earliestDate }
        let bound = Nanoseconds.add(earliestDate, earliestTolerance)
        // Emptied on the way out: the entries hold their timers strongly, and a timer kept
        // here after it left the mode would keep its callout's captures alive.
        defer { group.removeAll(keepingCapacity: true) }
        collect(upTo: bound, from: 0)
        group.sort { $0.precedes($1) }
        var hard = UInt64.max
        var wake = UInt64.max
        for entry in group {
            if entry.date > hard { break }
            hard = min(hard, Nanoseconds.add(entry.date, entry.tolerance))
            wake = entry.date
        }
        return wake
    }

    /// The index of the eligible entry of the least (date, sequence), or -1; it searches only
    /// below ineligible (firing or invalidated) entries.
    private static func earliestEligible(_ buffer: UnsafeBufferPointer<TimerQueueEntry>) -> Int {
        var best = -1
        visitForEarliest(buffer, 0, &best)
        return best
    }

    private static func visitForEarliest(_ buffer: UnsafeBufferPointer<TimerQueueEntry>, _ i: Int, _ best: inout Int) {
        guard i < buffer.count else { return }
        if best >= 0 && !buffer[i].precedes(buffer[best]) { return }  // its subtree comes later still
        if TimerQueueEntry.isEligible(buffer, i) {
            best = i
            return
        }
        visitForEarliest(buffer, 2 * i + 1, &best)
        visitForEarliest(buffer, 2 * i + 2, &best)
    }

    private mutating func collect(upTo bound: UInt64, from i: Int) {
        guard i < entries.count, entries[i].date <= bound else { return }
        if entries.withUnsafeBufferPointer({ TimerQueueEntry.isEligible($0, i) }) { group.append(entries[i]) }
        collect(upTo: bound, from: 2 * i + 1)
        collect(upTo: bound, from: 2 * i + 2)
    }

    /// Insertion sort for the usual one or two due timers; the library sort beyond that.
    private static func sortByDate(_ due: inout [DueTimer], from start: Int) {
        let count = due.count - start
        guard count > 1 else { return }
        let before: (DueTimer, DueTimer) -> Bool = { $0.date < $1.date || ($0.date == $1.date && $0.sequence < $1.sequence) }
        if count > 16 {
            due[start...].sort(by: before)
            return
        }
        for i in (start + 1)..<due.count {
            let pick = due[i]
            var j = i
            while j > start && before(pick, due[j - 1]) {
                due[j] = due[j - 1]
                j -= 1
            }
            due[j] = pick
        }
    }

    // MARK: Heap order

    private mutating func restore(_ index: Int) {
        if index > 0 && entries[index].precedes(entries[(index - 1) / 2]) {
            siftUp(index)
        } else {
            siftDown(index)
        }
    }

    private mutating func siftUp(_ start: Int) {
        entries.withUnsafeMutableBufferPointer { buffer in
            var i = start
            while i > 0 {
                let parent = (i - 1) / 2
                guard buffer[i].precedes(buffer[parent]) else { break }
                buffer.swapAt(i, parent)
                buffer[i].slot._withUnsafeGuaranteedRef { $0.index = i }
                i = parent
            }
            buffer[i].slot._withUnsafeGuaranteedRef { $0.index = i }
        }
    }

    private mutating func siftDown(_ start: Int) {
        entries.withUnsafeMutableBufferPointer { buffer in
            var i = start
            while true {
                let left = 2 * i + 1
                guard left < buffer.count else { break }
                let right = left + 1
                let child = right < buffer.count && buffer[right].precedes(buffer[left]) ? right : left
                guard buffer[child].precedes(buffer[i]) else { break }
                buffer.swapAt(i, child)
                buffer[i].slot._withUnsafeGuaranteedRef { $0.index = i }
                i = child
            }
            buffer[i].slot._withUnsafeGuaranteedRef { $0.index = i }
        }
    }
}
