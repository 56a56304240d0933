// The Swift API around the pool: deferred cleanup, the scoped forms, popAndPush, the page
// layout as objc4 has it, scribbling, configuration and the debug print.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Autorelease

private struct Failure: Error, Equatable { let code: Int }

@Suite("AutoreleasePoolAPI")
struct AutoreleasePoolAPITests {
    @Test("Deferred cleanups run at the pop, LIFO with the objects around them")
    func deferredCleanupOrder() {
        let log = Log()
        let duringBody = onFreshThread { () -> [Int] in
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(1, log))
            AutoreleasePool.deferCleanup(label: "close fd") { log.append(-1) }
            AutoreleasePool.autorelease(consuming: Tracked(2, log))
            AutoreleasePool.deferCleanup { log.append(-2) }
            let during = log.ids
            AutoreleasePool.pop(token)
            return during
        }
        #expect(duringBody.isEmpty)
        #expect(log.ids == [-2, 2, -1, 1])
    }

    @Test("A cleanup label and type names appear in the debug print")
    func debugPrintLayout() {
        let lines = onFreshThread { () -> [String] in
            final class Widget {}
            let outer = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Widget())
            let inner = AutoreleasePool.push()
            let widget = Widget()
            AutoreleasePool.autorelease(widget)
            AutoreleasePool.autorelease(widget)
            AutoreleasePool.deferCleanup(label: "close fd 7") {}
            let lines = AutoreleasePool.debugLines()
            AutoreleasePool.pop(inner)
            AutoreleasePool.pop(outer)
            return lines
        }
        #expect(lines.first == "##############")
        #expect(lines.dropFirst().first?.hasPrefix("AUTORELEASE POOLS for thread 0x") == true)
        #expect(lines.dropFirst(2).first == "5 releases pending.")
        #expect(lines.last == "##############")
        let body = Array(lines.dropFirst(3).dropLast())
        #expect(body.count == 6)
        #expect(body[0].hasPrefix("[0x") && body[0].hasSuffix("]  ................  PAGE  (hot) (cold)"))
        #expect(body[1].contains("  ################  POOL 0x"))   // the placeholder pool's boundary
        #expect(body[2].hasSuffix("  Widget"))
        #expect(body[3].contains("  ################  POOL 0x"))
        #expect(body[4].hasSuffix("  Widget  autorelease count 2"))
        #expect(body[5].hasSuffix("  close fd 7"))
        // "[slot]  %#16lx  name": the object column is 16 wide.
        let afterSlot = body[2].split(separator: "]", maxSplits: 1).last?.dropFirst(2) ?? ""
        #expect(afterSlot.prefix(16).drop(while: { $0 == " " }).hasPrefix("0x"))
        #expect(afterSlot.dropFirst(16).hasPrefix("  Widget"))
    }

    @Test("The page header is objc4's: 4096-aligned, magic, thread, parent/child, depth")
    func pageHeader() {
        let header = onFreshThread { () -> [String] in
            final class Object {}
            let token = AutoreleasePool.push()
            for _ in 0..<600 { AutoreleasePool.autorelease(consuming: Object()) }
            let probe = AutoreleasePool.push()
            let hot = UnsafeRawPointer(bitPattern: probe.address & ~UInt(4095))!
            let coldAddress = hot.load(fromByteOffset: 32, as: UInt.self)
            let cold = UnsafeRawPointer(bitPattern: coldAddress)!
            let magic = (0..<16).map { cold.load(fromByteOffset: $0, as: UInt8.self) }
            var facts: [String] = []
            facts.append(magic.prefix(4) == [0xA1, 0xA1, 0xA1, 0xA1] ? "magic0" : "bad magic0")
            facts.append(String(decoding: magic.dropFirst(4), as: UTF8.self))
            facts.append(coldAddress % 4096 == 0 ? "aligned" : "unaligned")
            facts.append(cold.load(fromByteOffset: 24, as: UInt.self) == currentThreadID() ? "thread" : "other thread")
            facts.append(cold.load(fromByteOffset: 40, as: UInt.self) == probe.address & ~UInt(4095) ? "child" : "no child")
            facts.append("depth \(cold.load(fromByteOffset: 48, as: UInt32.self))/\(hot.load(fromByteOffset: 48, as: UInt32.self))")
            facts.append("next \(hot.load(fromByteOffset: 16, as: UInt.self) == probe.address + 8)")
            facts.append("slot \(slotIndex(probe.address))")
            AutoreleasePool.pop(probe)
            AutoreleasePool.pop(token)
            return facts
        }
        // 1 extra boundary + 600 objects = 601 slots: page 1 holds 96, the probe is its slot 96.
        #expect(header == ["magic0", "AUTORELEASE!", "aligned", "thread", "child", "depth 0/1", "next true", "slot 96"])
        #expect(MemoryLayout<AutoreleasePool.Token>.size == 16)
    }

    @Test("Popping the outermost pool of a thread whose page exists (its token the page's first slot) releases its objects, keeps the page and lets the next push reuse the slot",
          arguments: [0, 1, 3])
    func outermostPool(objects: Int) {
        let log = Log()
        let (token, pageBegin, nextToken, pagesAfterPop, pendingAfterPop) = onFreshThread { () -> (UInt, UInt, UInt, Int, Int) in
            // The first push of a thread is objc4's placeholder; an autorelease makes the page.
            let first = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(-1, log))
            AutoreleasePool.pop(first)
            let token = AutoreleasePool.push()
            let address = token.address
            for id in 0..<objects { AutoreleasePool.autorelease(consuming: Tracked(id, log)) }
            AutoreleasePool.pop(token)
            let statistics = AutoreleasePool.statistics
            let again = AutoreleasePool.push()
            let nextAddress = again.address
            AutoreleasePool.pop(again)
            return (address, (address & PageLayout.pageMask) + UInt(PageLayout.headerSize), nextAddress,
                    statistics.pages, statistics.pendingEntries)
        }
        #expect(log.ids == [-1] + Array((0..<objects).reversed()))
        #expect(token == pageBegin)
        #expect(nextToken == token)
        #expect(pagesAfterPop == 1)
        #expect(pendingAfterPop == 0)
    }

    @Test("Released slots are scribbled with 0xA3")
    func scribble() {
        let words = onFreshThread { () -> [UInt] in
            final class Object {}
            let outer = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Object())
            let inner = AutoreleasePool.push()
            let boundary = inner.address
            AutoreleasePool.autorelease(consuming: Object())
            AutoreleasePool.pop(inner)
            let words = [word(at: boundary), word(at: boundary + 8)]
            AutoreleasePool.pop(outer)
            return words
        }
        #expect(words == [0xA3A3_A3A3_A3A3_A3A3, 0xA3A3_A3A3_A3A3_A3A3])
    }

    @Test("withAutoreleasePool returns the body's value and pops before returning")
    func scopedPoolReturns() {
        let log = Log()
        let (value, afterScope) = onFreshThread { () -> (Int, [Int]) in
            let value = withAutoreleasePool {
                AutoreleasePool.autorelease(consuming: Tracked(1, log))
                return 42
            }
            return (value, log.ids)
        }
        #expect(value == 42)
        #expect(afterScope == [1])
    }

    @Test("withAutoreleasePool rethrows the typed error after popping")
    func scopedPoolRethrows() {
        let log = Log()
        let outcome = onFreshThread { () -> (Failure?, [Int], Int) in
            let outer = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(0, log))
            var caught: Failure?
            do throws(Failure) {
                _ = try withAutoreleasePool { () throws(Failure) -> Int in
                    AutoreleasePool.autorelease(consuming: Tracked(1, log))
                    throw Failure(code: 7)
                }
            } catch { caught = error }
            let released = log.ids
            let pending = AutoreleasePool.statistics.pendingEntries
            AutoreleasePool.pop(outer)
            return (caught, released, pending)
        }
        #expect(outcome.0 == Failure(code: 7))
        #expect(outcome.1 == [1])
        #expect(outcome.2 == 2)   // only the outer pool's boundary and object remain
        #expect(log.ids == [1, 0])
    }

    @Test("popAndPush drains the pool and returns a fresh token in the same slot")
    func popAndPush() {
        let log = Log()
        let (slots, released) = onFreshThread { () -> ([Int], [Int]) in
            let outer = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(0, log))
            var token = AutoreleasePool.push()
            let first = slotIndex(token.address)
            AutoreleasePool.autorelease(consuming: Tracked(1, log))
            token = AutoreleasePool.popAndPush(token)
            let released = log.ids
            let second = slotIndex(token.address)
            AutoreleasePool.pop(token)
            AutoreleasePool.pop(outer)
            return ([first, second], released)
        }
        #expect(slots == [2, 2])
        #expect(released == [1])
        #expect(log.ids == [1, 0])
    }

    @Test("Coalescing can be switched off; the count saturates at 65535 extra")
    func coalescingSwitch() {
        let pending = onFreshThread { () -> [Int] in
            final class Object {}
            let object = Object()
            var result: [Int] = []
            for mode in AutoreleasePool.Coalescing.allCases {
                AutoreleasePool.configuration.coalescing = mode
                let token = AutoreleasePool.push()
                AutoreleasePool.autorelease(Object())
                for _ in 0..<5 { AutoreleasePool.autorelease(object) }
                result.append(AutoreleasePool.statistics.pendingEntries)
                AutoreleasePool.pop(token)
            }
            return result
        }
        // boundary + the other object + X (coalesced into 1 entry, or 5 entries when off)
        #expect(pending == [3, 3, 7])
    }

    @Test("Configuration is per thread; the process default seeds new threads")
    func configurationPerThread() {
        let (mine, other) = onFreshThread { () -> (AutoreleasePool.Configuration, AutoreleasePool.Configuration) in
            AutoreleasePool.configuration = .init(coalescing: .off, missingPool: .diagnoseAndLeak, highWater: .track)
            let other = onFreshThread { AutoreleasePool.configuration }
            return (AutoreleasePool.configuration, other)
        }
        #expect(mine == .init(coalescing: .off, missingPool: .diagnoseAndLeak, highWater: .track))
        #expect(other == AutoreleasePool.defaultConfiguration)
    }

    @Test("Hysteresis threshold: 251 used slots frees every child, 252 keeps one")
    func hysteresisThreshold() {
        let pagesAfterPop = onFreshThread { () -> [Int] in
            final class Object {}
            var result: [Int] = []
            primePool()
            for used in [251, 252] {
                let outer = AutoreleasePool.push()          // slot 0
                for _ in 0..<(used - 1) { AutoreleasePool.autorelease(consuming: Object()) }
                let inner = AutoreleasePool.push()          // slot `used`
                for _ in 0..<800 { AutoreleasePool.autorelease(consuming: Object()) }
                AutoreleasePool.pop(inner)
                result.append(AutoreleasePool.statistics.pages)
                AutoreleasePool.pop(outer)
            }
            return result
        }
        #expect(pagesAfterPop == [1, 2])
    }

    @Test("Objects autoreleased during a pop may fill new pages; the same pop releases them")
    func autoreleaseDuringPopAcrossPages() {
        let log = Log()
        let pages = onFreshThread { () -> Int in
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(-1, log))
            AutoreleasePool.autorelease(consuming: Spawner(0, log, spawning: Array(1...1200)))
            AutoreleasePool.pop(token)
            return AutoreleasePool.statistics.pages
        }
        #expect(log.ids == [0] + Array((1...1200).reversed()) + [-1])
        #expect(pages == 1)
    }

    @Test("A pool on the hot page whose release autoreleases more, on this page or on new ones, is popped whole, LIFO")
    func autoreleaseDuringHotPagePop() {
        let log = Log()
        let (pages, pending, peak) = onFreshThread { () -> ([Int], [Int], Int) in
            // The outer push takes the placeholder; the inner tokens are real slots on the hot page.
            let outer = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(-1, log))
            var pages: [Int] = [], pending: [Int] = []
            let small = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(10, log))
            AutoreleasePool.autorelease(consuming: Spawner(11, log, spawning: [12, 13]))
            AutoreleasePool.pop(small)
            pages.append(AutoreleasePool.statistics.pages)
            pending.append(AutoreleasePool.statistics.pendingEntries)
            let large = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(20, log))
            AutoreleasePool.autorelease(consuming: Spawner(21, log, spawning: Array(100...1299)))
            AutoreleasePool.pop(large)
            pages.append(AutoreleasePool.statistics.pages)
            pending.append(AutoreleasePool.statistics.pendingEntries)
            let peak = AutoreleasePool.statistics.peakEntries
            AutoreleasePool.pop(outer)
            return (pages, pending, peak)
        }
        #expect(log.ids == [11, 13, 12, 10] + [21] + Array((100...1299).reversed()) + [20, -1])
        // Each pop leaves the outer pool's boundary and object; the 1,200 spawned objects needed
        // two more pages, which the pop freed (the page is under half full: no child kept).
        #expect(pages == [1, 1])
        #expect(pending == [2, 2])
        // The peak saw the spawned objects: 2 outer + boundary + object 20 + 1,200 (the spawner's
        // slot was already released when they were added).
        #expect(peak >= 1_200 + 4)
    }

    @Test("A release during a hot-page pop that runs a whole pool of its own, leaving a child page, is trimmed as the pop leaves the page (hysteresis)")
    func balancedPoolInsideDeinitDuringHotPagePop() {
        /// Its deinit pushes a pool, fills the page and more (a child page) and pops it: `next` is
        /// back where it was when the deinit returns, and the page, then exactly half full, keeps
        /// one empty child.
        final class PoolRunner {
            let log: Log
            init(_ log: Log) { self.log = log }
            deinit {
                let token = AutoreleasePool.push()
                for id in 100..<700 { AutoreleasePool.autorelease(consuming: Tracked(id, log)) }
                AutoreleasePool.pop(token)
                log.append(0)
            }
        }
        final class Object {}
        let log = Log()
        let (pagesAfter, pending, peak) = onFreshThread { () -> (Int, Int, Int) in
            primePool()
            let outer = AutoreleasePool.push()                                                  // slot 0
            for _ in 0..<250 { AutoreleasePool.autorelease(consuming: Object()) }              // 1...250
            let inner = AutoreleasePool.push()                                                  // slot 251
            AutoreleasePool.autorelease(consuming: PoolRunner(log))                            // slot 252
            // The runner's release sees 252 used slots: its own pool's pop keeps one child. The
            // inner pool's pop then leaves 251, under half full: the child goes.
            AutoreleasePool.pop(inner)
            let statistics = AutoreleasePool.statistics
            AutoreleasePool.pop(outer)
            return (statistics.pages, statistics.pendingEntries, statistics.peakEntries)
        }
        #expect(log.ids == Array((100..<700).reversed()) + [0])
        #expect(pagesAfter == 1)
        #expect(pending == 251)
        // The peak saw the runner's pool on top of the 252 slots below it.
        #expect(peak >= 252 + 1 + 600)
    }

    @Test("autorelease(_:) keeps a borrowed object alive until the pop and hands it back")
    func borrowedObjectOutlivesCaller() {
        let log = Log()
        let outcome = onFreshThread { () -> [Int] in
            let outer = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(-1, log))
            let token = AutoreleasePool.push()
            var returnedSame = false
            do {
                let object = Tracked(1, log)
                let back: Tracked = AutoreleasePool.autorelease(object)
                let again: Tracked? = AutoreleasePool.autorelease(Optional(object))   // coalesced: count 1
                returnedSame = back === object && again === object
            }
            let beforePop = log.ids
            AutoreleasePool.pop(token)
            let afterPop = log.ids
            AutoreleasePool.pop(outer)
            return [returnedSame ? 1 : 0, beforePop.count, afterPop.count]
        }
        #expect(outcome == [1, 0, 1])
        #expect(log.ids == [1, -1])
    }

    @Test("AutoreleasePoolStack: nested runs, popAll, pop on empty")
    func poolStack() {
        let log = Log()
        let depths = onFreshThread { () -> [Int] in
            let stack = AutoreleasePoolStack()
            var depths: [Int] = []
            stack.pop()                                 // nothing to pop
            stack.push()
            AutoreleasePool.autorelease(consuming: Tracked(1, log))
            stack.push()
            AutoreleasePool.autorelease(consuming: Tracked(2, log))
            stack.popAndPush()
            AutoreleasePool.autorelease(consuming: Tracked(3, log))
            depths.append(stack.depth)
            stack.popAll()
            depths.append(stack.depth)
            return depths
        }
        #expect(depths == [2, 0])
        #expect(log.ids == [2, 3, 1])
    }
}
