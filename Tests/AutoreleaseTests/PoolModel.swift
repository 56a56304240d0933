// A plain-array reference model of the pool, and a driver that replays random operation
// sequences on the real pool and on the model side by side.
//
// The model is a flat array of slots: slot i lives on page i / 505 at offset i % 505 (every
// page below the hot page is full, so this holds for the real pool too). Coalescing, page
// growth and hysteresis are restated from the reference in the simplest terms.

@testable import Autorelease

struct PoolModel {
    enum Slot: Equatable {
        case boundary
        case object(id: Int, count: Int)
        case cleanup(id: Int)
    }

    let coalescing: AutoreleasePool.Coalescing
    var slots: [Slot] = []
    /// Slot index of each pushed pool's boundary, outermost first.
    var pools: [Int] = []
    /// References the pool holds per object id.
    var references: [Int: Int] = [:]
    /// Pages allocated; the cold page already exists when a sequence starts.
    var pages = 1
    /// Deinit/cleanup log the real pool must produce (cleanups are logged as negative ids).
    var expectedLog: [Int] = []

    static let slotsPerPage = 505

    private mutating func grow(toHold index: Int) {
        pages = max(pages, index / Self.slotsPerPage + 1)
    }

    mutating func push() -> Int {
        let index = slots.count
        grow(toHold: index)
        slots.append(.boundary)
        pools.append(index)
        return index
    }

    mutating func autorelease(id: Int) {
        references[id, default: 0] += 1
        let count = slots.count
        // Coalescing only looks at the hot page, and only if the entry goes on it.
        if count % Self.slotsPerPage != 0 {
            switch coalescing {
            case .lru:
                for offset in 0..<4 {
                    let index = count - 1 - offset
                    if index % Self.slotsPerPage == 0 { break }     // slot 0 is never examined
                    guard case let .object(found, extra) = slots[index] else {
                        if slots[index] == .boundary { break }
                        continue
                    }
                    if found == id && extra < 65535 {
                        slots.remove(at: index)
                        slots.append(.object(id: id, count: extra + 1))
                        return
                    }
                }
            case .topOnly:
                if case let .object(found, extra) = slots[count - 1], found == id, extra < 65535 {
                    slots[count - 1] = .object(id: id, count: extra + 1)
                    return
                }
            case .off:
                break
            }
        }
        grow(toHold: count)
        slots.append(.object(id: id, count: 0))
    }

    mutating func deferCleanup(id: Int) {
        grow(toHold: slots.count)
        slots.append(.cleanup(id: id))
    }

    /// Pops pool `level` and everything above it.
    mutating func pop(level: Int) {
        let stop = pools[level]
        pools.removeSubrange(level...)
        while slots.count > stop {
            switch slots.removeLast() {
            case .boundary:
                break
            case let .object(id, extra):
                references[id]! -= extra + 1
                if references[id] == 0 {
                    references[id] = nil
                    expectedLog.append(id)
                }
            case let .cleanup(id):
                expectedLog.append(-id)
            }
        }
        let tokenPage = stop / Self.slotsPerPage
        if stop % Self.slotsPerPage < 252 {
            pages = tokenPage + 1
        } else {
            pages = min(pages, tokenPage + 2)
        }
    }

    var liveObjects: [Int] { references.keys.sorted() }
}

/// Replays `sequences` random sequences on the calling thread, which must have an empty pool
/// with its cold page (see `primePool`). Returns a description of the first divergence, or nil.
func replayRandomSequences(seed: UInt64, sequences: Int) -> String? {
    var random = SplitMix64(seed: seed)
    let log = Log()
    var nextID = 1
    for sequence in 0..<sequences {
        let mode = AutoreleasePool.Coalescing.allCases[sequence % 3]
        AutoreleasePool.configuration.coalescing = mode
        var model = PoolModel(coalescing: mode)
        var tokens: [UInt] = []
        var handles: [Int: Unmanaged<Tracked>] = [:]
        var recent: [Int] = []
        log.ids.removeAll(keepingCapacity: true)

        func check(_ step: String) -> String? {
            let stats = AutoreleasePool.statistics
            if stats.pendingEntries != model.slots.count {
                return "seed \(seed) sequence \(sequence) (\(mode)) after \(step): \(stats.pendingEntries) entries, model \(model.slots.count)"
            }
            if stats.pages != model.pages {
                return "seed \(seed) sequence \(sequence) (\(mode)) after \(step): \(stats.pages) pages, model \(model.pages)"
            }
            if log.ids != model.expectedLog {
                return "seed \(seed) sequence \(sequence) (\(mode)) after \(step): log \(log.ids.suffix(12)), model \(model.expectedLog.suffix(12))"
            }
            return nil
        }

        func push() -> String? {
            let index = model.push()
            let token = AutoreleasePool.push()
            if slotIndex(token.address) != index % PoolModel.slotsPerPage {
                return "seed \(seed) sequence \(sequence): token in slot \(slotIndex(token.address)), model \(index % 505)"
            }
            tokens.append(token.unsafeRaw)
            return nil
        }

        func autoreleaseNew() {
            let id = nextID
            nextID += 1
            let object = Tracked(id, log)
            handles[id] = Unmanaged.passUnretained(object)
            AutoreleasePool.autorelease(consuming: object)
            model.autorelease(id: id)
            recent.append(id)
            if recent.count > 6 { recent.removeFirst() }
        }

        func pop(level: Int, checked: Bool) -> String? {
            let raw = tokens[level]
            tokens.removeSubrange(level...)
            model.pop(level: level)
            if checked {
                do {
                    try AutoreleasePool.checkedPop(AutoreleasePool.Token(unsafeRaw: raw))
                } catch {
                    return "seed \(seed) sequence \(sequence): checked pop refused a live token: \(error)"
                }
            } else {
                AutoreleasePool.pop(AutoreleasePool.Token(unsafeRaw: raw))
            }
            return nil
        }

        if let problem = push() { return problem }
        let operations = Int.random(in: 1...24, using: &random)
        for step in 0..<operations {
            let dice = Int.random(in: 0..<100, using: &random)
            var label = ""
            switch dice {
            case 0..<15 where tokens.count < 8:
                label = "push"
                if let problem = push() { return problem }
            case 0..<45:
                label = "autorelease new"
                autoreleaseNew()
            case 45..<70:
                let alive = recent.filter { model.references[$0] != nil }
                if let id = alive.randomElement(using: &random) {
                    label = "autorelease \(id) again"
                    AutoreleasePool.autorelease(handles[id]!.takeUnretainedValue())
                    model.autorelease(id: id)
                } else {
                    label = "autorelease new"
                    autoreleaseNew()
                }
            case 70..<78:
                label = "cleanup"
                let id = nextID
                nextID += 1
                AutoreleasePool.deferCleanup { log.append(-id) }
                model.deferCleanup(id: id)
            case 78..<80:
                let count = Int.random(in: 250...700, using: &random)
                label = "burst of \(count)"
                for _ in 0..<count { autoreleaseNew() }
            case 80..<90 where tokens.count > 1:
                let level = Int.random(in: 1..<tokens.count, using: &random)
                label = "pop level \(level)"
                if let problem = pop(level: level, checked: dice % 2 == 0) { return problem }
            case 90..<100 where tokens.count > 1:
                label = "popAndPush"
                let raw = tokens.removeLast()
                model.pop(level: model.pools.count - 1)
                let index = model.push()
                let token = AutoreleasePool.popAndPush(AutoreleasePool.Token(unsafeRaw: raw))
                if slotIndex(token.address) != index % PoolModel.slotsPerPage {
                    return "seed \(seed) sequence \(sequence): popAndPush token in slot \(slotIndex(token.address)), model \(index % 505)"
                }
                tokens.append(token.unsafeRaw)
            default:
                label = "autorelease new"
                autoreleaseNew()
            }
            if let problem = check("step \(step): \(label)") { return problem }
        }
        if let problem = pop(level: 0, checked: false) { return problem }
        if let problem = check("final pop") { return problem }
        if !model.references.isEmpty { return "seed \(seed) sequence \(sequence): model still holds \(model.liveObjects)" }
    }
    AutoreleasePool.configuration.coalescing = .lru
    return nil
}

/// Gives the calling thread an empty pool with its cold page, as the model assumes.
func primePool() {
    final class Primer {}
    let token = AutoreleasePool.push()
    AutoreleasePool.autorelease(consuming: Primer())
    AutoreleasePool.pop(token)
}
