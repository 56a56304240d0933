// Many threads, each with its own pool, at the same time. Run under ThreadSanitizer with
// `swift test --sanitize=thread --filter PoolThreads`.

import Synchronization
import Testing
@testable import Autorelease

/// Counts deinits from any thread.
final class DeinitCounter: Sendable {
    let count = Atomic<Int>(0)
}

final class Counted {
    let counter: DeinitCounter
    init(_ counter: DeinitCounter) { self.counter = counter }
    deinit { counter.count.add(1, ordering: .relaxed) }
}

@Suite("PoolThreads")
struct PoolThreadsTests {
    @Test("8 threads replay random sequences against the model at the same time")
    func concurrentModels() {
        let problems = onFreshThreads(8) { index -> String? in
            primePool()
            return replayRandomSequences(seed: 0xC0FF_EE00 + UInt64(index), sequences: 400)
        }
        #expect(problems.compactMap { $0 }.isEmpty, "\(problems.compactMap { $0 })")
    }

    @Test("Threads that exit with pools pushed release everything, while another thread reads the totals")
    func exitWithOpenPools() {
        let counter = DeinitCounter()
        let reads = onFreshThreads(9) { index -> Int in
            if index == 8 {
                // A reader: process totals are atomics and may be read at any time.
                var observed = 0
                for _ in 0..<2000 { observed = max(observed, AutoreleasePool.processStatistics.pages) }
                return observed >= 0 ? 1 : 0
            }
            for round in 0..<20 {
                _ = AutoreleasePool.push()
                for _ in 0..<(50 * (round % 7 + 1)) { AutoreleasePool.autorelease(consuming: Counted(counter)) }
                AutoreleasePool.deferCleanup { counter.count.add(1, ordering: .relaxed) }
            }
            return 0
        }
        let perThread = (0..<20).reduce(0) { $0 + 50 * ($1 % 7 + 1) + 1 }
        #expect(counter.count.load(ordering: .relaxed) == 8 * perThread)
        #expect(reads[8] == 1)
    }

    @Test("The exit drain follows the thread's pages: none after placeholder pools or drainThread(), and again once a later pool makes a page")
    func exitDrainFollowsPages() {
        let log = Log()
        let pagesBeforeExit = onFreshThread { () -> [Int] in
            var pages: [Int] = []
            for _ in 0..<3 { AutoreleasePool.pop(AutoreleasePool.push()) }   // placeholder pools
            pages.append(AutoreleasePool.statistics.pages)
            let first = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(1, log))
            AutoreleasePool.pop(first)
            AutoreleasePool.drainThread()
            pages.append(AutoreleasePool.statistics.pages)
            _ = AutoreleasePool.push()   // left open: the exit drain releases what follows
            AutoreleasePool.autorelease(consuming: Tracked(2, log))
            AutoreleasePool.autorelease(consuming: Tracked(3, log))
            pages.append(AutoreleasePool.statistics.pages)
            return pages
        }
        #expect(pagesBeforeExit == [0, 0, 1])
        #expect(log.ids == [1, 3, 2])
    }

    @Test("Nested pools and cleanups on many threads, each popped by its own thread")
    func nestedOnManyThreads() {
        let counter = DeinitCounter()
        let leftovers = onFreshThreads(6) { index -> Int in
            let stack = AutoreleasePoolStack()
            for round in 0..<200 {
                stack.push()
                for _ in 0..<(round % 13) { AutoreleasePool.autorelease(consuming: Counted(counter)) }
                if round % 3 == 0 { AutoreleasePool.deferCleanup { counter.count.add(1, ordering: .relaxed) } }
                if round % 5 == 4 { stack.popAndPush() }
                if round % 4 == 3 { stack.pop(); stack.pop() }
            }
            stack.popAll()
            return AutoreleasePool.statistics.pendingEntries
        }
        let perThread = (0..<200).reduce(0) { $0 + $1 % 13 + ($1 % 3 == 0 ? 1 : 0) }
        #expect(leftovers == Array(repeating: 0, count: 6))
        #expect(counter.count.load(ordering: .relaxed) == 6 * perThread)
    }
}
