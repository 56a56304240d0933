import Testing
import Autorelease
import PThreads

@Suite("Statistics text")
struct StatisticsTextTests {
    @Test("a thread that never had a pool reads 'no pool', never 'high water 0'")
    func noPoolSaysSo() {
        let text = Locked("")
        runOnNewPThread { text.withLock { $0 = AutoreleasePool.statistics.description } }
        #expect(text.withLock { $0 } == "no pool")
    }

    @Test("with a pool the line names pending entries and omits an unrecorded high-water mark")
    func withPoolNoHighWater() {
        let text = Locked("")
        runOnNewPThread {
            withAutoreleasePool {
                AutoreleasePool.autorelease(Box())
                text.withLock { $0 = AutoreleasePool.statistics.description }
            }
        }
        let line = text.withLock { $0 }
        #expect(line.hasPrefix("pending 2 entries"), "\(line)")
        #expect(!line.contains("high-water") && !line.contains("high water"), "\(line)")
    }

    private final class Box {}
}
