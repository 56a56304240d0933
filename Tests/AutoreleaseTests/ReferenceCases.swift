// The 15 pool reference cases (AP1–AP15 in Docs/Rules.md), adapted to Swift: tokens are
// addresses, slot counts are exact, "tagged pointers" become nil, objc4's environment
// variables become per-thread `AutoreleasePool.configuration`.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Autorelease

@Suite("AutoreleasePoolReferenceCases")
struct AutoreleasePoolReferenceCases {
    @Test("1. The first push is the placeholder and allocates nothing")
    func case01() {
        let (first, pagesAfterPush, printed, pagesAfterPop, second) = onFreshThread {
            let token = AutoreleasePool.push()
            let first = token.address
            let pages = AutoreleasePool.statistics.pages
            let printed = AutoreleasePool.debugLines()
            AutoreleasePool.pop(token)
            let pagesAfterPop = AutoreleasePool.statistics.pages
            let again = AutoreleasePool.push()
            let second = again.address
            AutoreleasePool.pop(again)
            return (first, pages, printed, pagesAfterPop, second)
        }
        #expect(first == 1)
        #expect(pagesAfterPush == 0)
        #expect(printed.contains("[0x1]  ................  PAGE (placeholder)"))
        #expect(printed.contains("[0x1]  ################  POOL (placeholder)"))
        #expect(pagesAfterPop == 0)
        #expect(second == 1)
    }

    @Test("2. 1000 objects fill page 0 (boundary + 504) and page 1 (496); pop is LIFO and frees page 1")
    func case02() {
        let log = Log()
        let result = onFreshThread {
            let token = AutoreleasePool.push()
            for id in 1...1000 { AutoreleasePool.autorelease(consuming: Tracked(id, log)) }
            let pages = printedPages().map(\.slots.count)
            let pending = AutoreleasePool.statistics.pendingEntries
            AutoreleasePool.pop(token)
            let pagesAfter = AutoreleasePool.statistics.pages
            let next = AutoreleasePool.push()
            let nextAddress = next.address
            AutoreleasePool.pop(next)
            return (pages, pending, pagesAfter, nextAddress)
        }
        #expect(result.0 == [505, 496])
        #expect(result.1 == 1001)
        #expect(log.ids == Array((1...1000).reversed()))
        #expect(result.2 == 1)
        #expect(result.3 != 1)
        #expect(slotIndex(result.3) == 0)
    }

    @Test("3. Hysteresis keeps one empty child when the token's page has >= 252 used slots")
    func case03() {
        let log = Log()
        let result = onFreshThread {
            let t0 = AutoreleasePool.push()
            for id in 0..<300 { AutoreleasePool.autorelease(consuming: Tracked(id, log)) }
            let t1 = AutoreleasePool.push()
            let t1Slot = slotIndex(t1.address)
            for id in 300..<1300 { AutoreleasePool.autorelease(consuming: Tracked(id, log)) }
            let layout = printedPages().map(\.slots.count)
            let pagesBefore = AutoreleasePool.statistics.pages
            AutoreleasePool.pop(t1)
            let pagesAfterInner = AutoreleasePool.statistics.pages
            AutoreleasePool.pop(t0)
            let pagesAfterOuter = AutoreleasePool.statistics.pages
            return (t1Slot, layout, pagesBefore, pagesAfterInner, pagesAfterOuter)
        }
        #expect(result.0 == 301)
        #expect(result.1 == [505, 505, 292])
        #expect(result.2 == 3)
        #expect(result.3 == 2)   // page 1 kept empty, page 2 freed
        #expect(result.4 == 1)   // page 1 freed once page 0 is below half
        #expect(log.ids == Array((0..<1300).reversed()))
    }

    @Test("4. Popping an outer token pops the inner pool too")
    func case04() {
        let log = Log()
        let staleError = onFreshThread { () -> AutoreleasePoolError? in
            let a = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(1, log))   // X
            let b = AutoreleasePool.push()
            let bRaw = b.unsafeRaw
            _ = consume b
            AutoreleasePool.autorelease(consuming: Tracked(2, log))   // Y
            AutoreleasePool.pop(a)
            do throws(AutoreleasePoolError) {
                try AutoreleasePool.checkedPop(AutoreleasePool.Token(unsafeRaw: bRaw))
                return nil
            } catch {
                return error
            }
        }
        #expect(log.ids == [2, 1])
        guard case .staleToken = staleError else {
            Issue.record("expected the inner token to be stale, got \(String(describing: staleError))")
            return
        }
    }

    @Test("5. Popping a token whose pool was already popped is fatal, with objc4's text")
    func case05() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Object {}
            let a = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Object())
            let b = AutoreleasePool.push()
            AutoreleasePool.pop(a)
            AutoreleasePool.pop(b)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Invalid or prematurely-freed autorelease pool 0x"))
        #expect(text.contains(". Set a breakpoint on objc_autoreleasePoolInvalid to debug."))
        #expect(text.contains("Invalid autorelease pools are a fatal error"))
    }

    @Test("6. An object autoreleased during a pop's release is released by that pop, LIFO")
    func case06() {
        let log = Log()
        onFreshThread {
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(1, log))                       // A
            AutoreleasePool.autorelease(consuming: Spawner(2, log, spawning: [3]))        // B, autoreleases C
            AutoreleasePool.pop(token)
            log.append(-1)   // the pop has returned
        }
        #expect(log.ids == [2, 3, 1, -1])
    }

    @Test("7. LIFO across pages, iteratively: 1,000,000 objects on a 64 KiB stack")
    func case07() {
        let log = Log()
        log.ids.reserveCapacity(1_000_000)
        let pages = onFreshThread(stackSize: 64 * 1024) {
            let token = AutoreleasePool.push()
            for id in 0..<1_000_000 { AutoreleasePool.autorelease(consuming: Tracked(id, log)) }
            let pages = AutoreleasePool.statistics.pages
            AutoreleasePool.pop(token)
            return pages
        }
        #expect(pages == (1_000_000 + 1 + 504) / 505)
        #expect(log.ids.count == 1_000_000)
        #expect(log.ids.first == 999_999 && log.ids.last == 0)
        #expect(zip(log.ids, log.ids.dropFirst()).allSatisfy { $0 == $1 + 1 })
    }

    @Test("8. Coalescing: three autoreleases of X take one slot, count 3, three releases")
    func case08() {
        let result = onFreshThread {
            final class X {}
            let outer = AutoreleasePool.push()
            AutoreleasePool.autorelease(X())   // gives the thread a page
            var x = X()
            let pool = AutoreleasePool.push()
            for _ in 0..<3 { AutoreleasePool.autorelease(x) }
            let probe = AutoreleasePool.push()
            let gap = Int(probe.address - pool.address) / 8
            let printed = AutoreleasePool.debugLines()
            let releases = AutoreleasePool.statistics.pendingReleases
            AutoreleasePool.pop(probe)
            let uniqueBefore = isKnownUniquelyReferenced(&x)
            AutoreleasePool.pop(pool)
            let uniqueAfter = isKnownUniquelyReferenced(&x)

            // 70000 autoreleases: one full entry (65536) and one of 4464.
            let big = AutoreleasePool.push()
            for _ in 0..<70_000 { AutoreleasePool.autorelease(x) }
            let bigPending = AutoreleasePool.statistics.pendingEntries
            let counts = AutoreleasePool.debugLines().filter { $0.contains("autorelease count") }
            AutoreleasePool.pop(big)
            let uniqueAfterBig = isKnownUniquelyReferenced(&x)
            AutoreleasePool.pop(outer)
            return (gap, printed.contains { $0.hasSuffix("X  autorelease count 3") }, releases, uniqueBefore, uniqueAfter,
                    bigPending, counts, uniqueAfterBig)
        }
        #expect(result.0 == 2)
        #expect(result.1)
        #expect(result.2 == 1 + 3)       // the outer X plus three for the coalesced entry
        #expect(!result.3)
        #expect(result.4)
        #expect(result.5 == 2 + 3)       // outer boundary + X, then boundary + 2 entries
        #expect(result.6.count == 2)
        #expect(result.6.first?.hasSuffix("autorelease count 65536") == true)
        #expect(result.6.last?.hasSuffix("autorelease count 4464") == true)
        #expect(result.7)
    }

    @Test("9. LRU: A,B,C,D,A moves A to the top; five objects twice take 11 slots")
    func case09() {
        let log = Log()
        let (gapABCDA, order, gapTwice) = onFreshThread {
            let outer = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(0, log))
            let pool = AutoreleasePool.push()
            var objects = (1...4).map { Tracked($0, log) }
            for object in objects { AutoreleasePool.autorelease(object) }
            AutoreleasePool.autorelease(objects[0])
            objects.removeAll()
            let probe = AutoreleasePool.push()
            let gap = Int(probe.address - pool.address) / 8
            AutoreleasePool.pop(probe)
            AutoreleasePool.pop(pool)
            let order = log.ids

            let second = AutoreleasePool.push()
            let five = (10...14).map { Tracked($0, log) }
            for object in five { AutoreleasePool.autorelease(object) }
            for object in five { AutoreleasePool.autorelease(object) }
            let probe2 = AutoreleasePool.push()
            let gapTwice = Int(probe2.address - second.address) / 8
            AutoreleasePool.pop(probe2)
            AutoreleasePool.pop(second)
            AutoreleasePool.pop(outer)
            return (gap, order, gapTwice)
        }
        #expect(gapABCDA == 5)              // boundary + B, C, D, A(count 2)
        #expect(order == [1, 4, 3, 2])       // A (both releases) first, then D, C, B
        #expect(gapTwice == 11)
    }

    @Test("10. Slot 0 of an overflow page is never examined by LRU; top-only coalesces it",
          arguments: [AutoreleasePool.Coalescing.lru, .topOnly])
    func case10(mode: AutoreleasePool.Coalescing) {
        let overflowSlots = onFreshThread {
            final class Filler {}
            AutoreleasePool.configuration.coalescing = mode
            let token = AutoreleasePool.push()      // placeholder; the first object adds its boundary
            for _ in 0..<504 { AutoreleasePool.autorelease(consuming: Filler()) }
            let x = Filler()
            AutoreleasePool.autorelease(x)          // lands in slot 0 of page 1
            AutoreleasePool.autorelease(x)
            let layout = printedPages().map(\.slots.count)
            AutoreleasePool.pop(token)
            return layout
        }
        #expect(overflowSlots == (mode == .lru ? [505, 2] : [505, 1]))
    }

    @Test("11. Autorelease with no pool: implicit cold page, slot 0 is the object, drained at thread exit")
    func case11() {
        let log = Log()
        let result = onFreshThread {
            AutoreleasePool.autorelease(consuming: Tracked(7, log))
            let pages = printedPages()
            let stats = AutoreleasePool.statistics
            let aliveBeforeExit = log.ids.isEmpty
            return (pages, stats.pendingEntries, stats.pages, aliveBeforeExit)
        }
        #expect(result.0.count == 1)
        #expect(result.0.first?.slots.count == 1)
        #expect(result.0.first?.slots.first?.hasSuffix("Tracked") == true)   // an object, not a POOL line
        #expect(result.1 == 1)
        #expect(result.2 == 1)
        #expect(result.3)
        #expect(log.ids == [7])    // released when the thread exited
    }

    @Test("12. A thread that exits with pools pushed releases everything LIFO and frees its pages")
    func case12() async {
        let log = Log()
        onFreshThread {
            _ = AutoreleasePool.push()
            for id in 0..<600 { AutoreleasePool.autorelease(consuming: Tracked(id, log)) }
            _ = AutoreleasePool.push()
            AutoreleasePool.deferCleanup { log.append(-1) }
            for id in 600..<700 { AutoreleasePool.autorelease(consuming: Tracked(id, log)) }
        }
        #expect(log.ids == Array((600..<700).reversed()) + [-1] + Array((0..<600).reversed()))
        // Page accounting is process-wide, so check it where nothing else runs.
        await #expect(processExitsWith: .success) {
            final class Object {}
            var thread = pthread_t()
            pthread_create(&thread, nil, { _ in
                _ = AutoreleasePool.push()
                for _ in 0..<2000 { AutoreleasePool.autorelease(consuming: Object()) }
                return nil
            }, nil)
            pthread_join(thread, nil)
            let totals = AutoreleasePool.processStatistics
            exit(totals.pages == 0 && totals.pendingEntries == 0 && totals.peakBytes == 4 * 4096 ? 0 : 1)
        }
    }

    @Test("13. nil never enters the pool (Swift has no tagged class pointers)")
    func case13() {
        let result = onFreshThread {
            final class Object {}
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(Object())
            let before = AutoreleasePool.statistics.pendingEntries
            let none: Object? = nil
            let returned = AutoreleasePool.autorelease(none)
            let after = AutoreleasePool.statistics.pendingEntries
            AutoreleasePool.pop(token)
            return (before, after, returned == nil)
        }
        #expect(result.0 == 2)
        #expect(result.1 == 2)
        #expect(result.2)
    }

    @Test("14. High-water marks: 301, nothing for 501, then 608 (objc4's +256 rule)")
    func case14() {
        let marks = onFreshThread {
            final class Object {}
            AutoreleasePool.configuration.highWater = .track
            var marks: [Int] = []
            for count in [300, 500, 600] {
                let token = AutoreleasePool.push()
                for _ in 0..<count { AutoreleasePool.autorelease(consuming: Object()) }
                AutoreleasePool.pop(token)
                marks.append(AutoreleasePool.statistics.highWaterMark)
            }
            return marks
        }
        #expect(marks == [301, 301, 608])
    }

    @Test("15. Per-callout pools: an object autoreleased in a callout dies before the next callout")
    func case15() {
        let log = Log()
        let (perCallout, classic) = onFreshThread {
            // A "run" with per-callout pools (modern CF): Entry pushes the run's pool, every
            // callout runs in its own pool, Exit pops.
            let pools = AutoreleasePoolStack()
            var seen: [[Int]] = []
            pools.push()                                           // Entry
            pools.withCalloutPool { AutoreleasePool.autorelease(consuming: Tracked(1, log)) }
            seen.append(log.ids)                                   // before callout 2
            pools.withCalloutPool { AutoreleasePool.autorelease(consuming: Tracked(2, log)) }
            seen.append(log.ids)
            pools.pop()                                            // Exit

            // The classic scheme: objects live until BeforeWaiting's pop + push.
            log.ids.removeAll()
            var classic: [[Int]] = []
            pools.push()                                           // Entry
            AutoreleasePool.autorelease(consuming: Tracked(3, log)) // a callout without its own pool
            classic.append(log.ids)
            // A nested run (e.g. a modal) pushes and pops its own pool inside.
            pools.push()
            AutoreleasePool.autorelease(consuming: Tracked(4, log))
            pools.pop()
            classic.append(log.ids)
            pools.popAndPush()                                     // BeforeWaiting
            classic.append(log.ids)
            pools.pop()                                            // Exit
            classic.append([pools.depth])
            return (seen, classic)
        }
        #expect(perCallout == [[1], [1, 2]])
        #expect(classic == [[], [4], [4, 3], [0]])
    }
}

/// The printing variants of behaviours 11 and 14 (they run in a child process to capture
/// standard error).
@Suite("AutoreleasePoolReferenceOutput")
struct AutoreleasePoolReferenceOutput {
    @Test("11b. Missing-pool diagnostic prints objc4's line with the type name and leaks")
    func case11Diagnostic() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            final class Widget {}
            AutoreleasePool.configuration.missingPool = .diagnoseAndLeak
            AutoreleasePool.autorelease(consuming: Widget())
            if AutoreleasePool.statistics.pages != 0 { exit(3) }
            exit(0)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("MISSING POOLS: (0x"))
        #expect(text.contains(" of class Widget autoreleased with no pool in place - just leaking - break on objc_autoreleaseNoPool() to debug"))
    }

    @Test("11c. Missing-pool fatal mode traps")
    func case11Fatal() async {
        await #expect(processExitsWith: .failure) {
            final class Widget {}
            AutoreleasePool.configuration.missingPool = .fatal
            AutoreleasePool.autorelease(consuming: Widget())
        }
    }

    @Test("14b. High-water printing writes objc4's POOL HIGHWATER lines")
    func case14Print() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            final class Object {}
            var thread = pthread_t()
            pthread_create(&thread, nil, { _ in
                AutoreleasePool.configuration.highWater = .report
                for count in [300, 500, 600] {
                    let token = AutoreleasePool.push()
                    for _ in 0..<count { AutoreleasePool.autorelease(consuming: Object()) }
                    AutoreleasePool.pop(token)
                }
                let token = AutoreleasePool.push()
                let object = Object()
                for _ in 0..<900 { AutoreleasePool.autorelease(object) }
                for _ in 0..<900 { AutoreleasePool.autorelease(consuming: Object()) }
                AutoreleasePool.pop(token)
                return nil
            }, nil)
            pthread_join(thread, nil)
        }
        let lines = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self).split(separator: "\n")
        let marks = lines.filter { $0.contains("POOL HIGHWATER: new high water mark of ") }
        #expect(marks.count == 3)        // 301, 608, then 909 = 512 + 397 (1 coalesced + 900 + boundary)
        #expect(marks.first?.contains("new high water mark of 301 pending releases for thread 0x") == true)
        #expect(marks.dropFirst().first?.contains("new high water mark of 608 pending releases") == true)
        #expect(marks.last?.contains("new high water mark of 909 pending releases") == true)
        #expect(lines.contains { $0.hasSuffix("POOL HIGHWATER: extra sequential autoreleases of objects: 899") })
    }
}
