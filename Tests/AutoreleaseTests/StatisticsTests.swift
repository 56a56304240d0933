// Measuring memory: per-thread statistics and peaks, process totals, pages freed.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
import PThreads
@testable import Autorelease

@Suite("AutoreleasePoolStatistics")
struct AutoreleasePoolStatisticsTests {
    @Test("Per-thread pending entries, releases, pages, bytes and peaks")
    func perThread() {
        let snapshots = onFreshThread { () -> [AutoreleasePool.Statistics] in
            final class Object {}
            var snapshots = [AutoreleasePool.statistics]
            let token = AutoreleasePool.push()
            let shared = Object()
            for _ in 0..<3 { AutoreleasePool.autorelease(shared) }
            for _ in 0..<1000 { AutoreleasePool.autorelease(consuming: Object()) }
            snapshots.append(AutoreleasePool.statistics)
            AutoreleasePool.pop(token)
            snapshots.append(AutoreleasePool.statistics)
            AutoreleasePool.resetPeaks()
            snapshots.append(AutoreleasePool.statistics)
            return snapshots
        }
        let expected: [AutoreleasePool.Statistics] = [
            .init(pendingEntries: 0, pendingReleases: 0, pages: 0, bytes: 0, peakEntries: 0, peakBytes: 0, highWaterMark: 0),
            .init(pendingEntries: 1002, pendingReleases: 1003, pages: 2, bytes: 8192, peakEntries: 1002, peakBytes: 8192, highWaterMark: 0),
            .init(pendingEntries: 0, pendingReleases: 0, pages: 1, bytes: 4096, peakEntries: 1002, peakBytes: 8192, highWaterMark: 0),
            .init(pendingEntries: 0, pendingReleases: 0, pages: 1, bytes: 4096, peakEntries: 0, peakBytes: 4096, highWaterMark: 0),
        ]
        #expect(snapshots == expected)
    }

    @Test("The peak includes entries added during a pop")
    func peakDuringPop() {
        let peak = onFreshThread { () -> Int in
            let log = Log()
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Spawner(0, log, spawning: Array(1...700)))
            AutoreleasePool.pop(token)
            return AutoreleasePool.statistics.peakEntries
        }
        // Before the pop: boundary + spawner = 2. During it: boundary + 700 children.
        #expect(peak == 701)
    }

    @Test("Process totals sum the threads and return to 0 when they exit")
    func processTotals() async {
        await #expect(processExitsWith: .success) {
            final class Object {}
            struct Gate {
                var parked = 0
                var open = false
            }
            // Threads park until released; every wait gives up after 10 s and says what did
            // not happen (the child then exits with status 2).
            let gate = Locked(Gate()), changed = PThreadCondition()
            @Sendable func deadline() -> UInt64 {
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                return UInt64(now.tv_sec + 10) * 1_000_000_000 + UInt64(now.tv_nsec)
            }
            @Sendable func giveUp(_ what: String) -> Never {
                // The parent sees only the exit status: 2 means a wait ran out (this line says which).
                print("processTotals: \(what) within 10 s")
                exit(2)
            }
            var threads: [pthread_t] = []
            for _ in 0..<4 {
                threads.append(startPThread(name: "statistics-parker") {
                    let token = AutoreleasePool.push()
                    for _ in 0..<600 { AutoreleasePool.autorelease(consuming: Object()) }
                    _ = AutoreleasePool.statistics   // publishes this thread's pending entries
                    gate.withLock { $0.parked += 1 }
                    changed.broadcast()
                    guard gate.wait(on: changed, untilMonotonicNanoseconds: deadline(), until: { $0.open }) else {
                        giveUp("the parked thread was not released")
                    }
                    AutoreleasePool.pop(token)
                })
            }
            guard gate.wait(on: changed, untilMonotonicNanoseconds: deadline(), until: { $0.parked == 4 }) else {
                giveUp("4 threads did not park")
            }
            let during = AutoreleasePool.processStatistics
            gate.withLock { $0.open = true }
            changed.broadcast()
            for thread in threads { pthread_join(thread, nil) }
            let after = AutoreleasePool.processStatistics
            let ok = during.pages == 8 && during.pendingEntries == 4 * 601 && during.bytes == 8 * 4096
                && after.pages == 0 && after.pendingEntries == 0 && after.peakBytes == 8 * 4096
                && after.peakEntries == 4 * 601
            exit(ok ? 0 : 1)
        }
    }
}

@Suite("AutoreleasePoolPages")
struct AutoreleasePoolPagesTests {
    @Test("drainThread releases every pool LIFO and frees the cold page too")
    func drainThread() {
        let log = Log()
        let (pagesBefore, after, pushedAfter) = onFreshThread { () -> (Int, AutoreleasePool.Statistics, UInt) in
            _ = AutoreleasePool.push()
            for id in 0..<700 { AutoreleasePool.autorelease(consuming: Tracked(id, log)) }
            _ = AutoreleasePool.push()
            AutoreleasePool.deferCleanup { log.append(-1) }
            let before = AutoreleasePool.statistics.pages
            AutoreleasePool.drainThread()
            let after = AutoreleasePool.statistics
            let token = AutoreleasePool.push()
            let address = token.address
            AutoreleasePool.pop(token)
            return (before, after, address)
        }
        #expect(pagesBefore == 2)
        #expect(after.pages == 0 && after.pendingEntries == 0)
        #expect(pushedAfter == 1)   // back to the placeholder state
        #expect(log.ids == [-1] + Array((0..<700).reversed()))
    }
}
