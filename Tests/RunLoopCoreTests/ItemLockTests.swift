import Testing
import PThreads
import CRunLoopShims
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// Items share a fixed table of locks (`ItemLock`) instead of each holding a mutex of its own.
@Suite("Item locks")
struct ItemLockTests {
    @Test("a stripe table hands the same mutex for numbers a table's size apart, a different one on its own cache line to neighbours")
    func stripesRepeatEveryCount() {
        let stripes = MutexStripes(count: 8)
        #expect(stripes.count == 8)
        #expect(stripes[3].raw == stripes[3 + 8].raw)
        #expect(stripes[3].raw != stripes[4].raw)
        let gap = UnsafeRawPointer(stripes[4].raw) - UnsafeRawPointer(stripes[3].raw)
        #expect(gap >= 64)
        stripes[3].withLock { #expect(pthread_mutex_trylock(stripes[11].raw) == EBUSY) }
        #expect(pthread_mutex_trylock(stripes[11].raw) == 0)
        pthread_mutex_unlock(stripes[11].raw)
    }

    @Test("two threads, each on its own item of one shared stripe, take turns and lose no update")
    func sharedStripeSerialises() async {
        let first = ItemLock(itemID: 40), second = ItemLock(itemID: 40 + 256)
        let counter = Locked(0)   // checks the total; each increment happens under an item lock
        nonisolated(unsafe) var unguarded = 0
        await withTaskGroup(of: Void.self) { group in
            for lock in [first, second] {
                group.addTask {
                    for _ in 0..<10_000 {
                        lock.withLock { unguarded += 1 }
                        counter.withLock { $0 += 1 }
                    }
                }
            }
        }
        #expect(unguarded == 20_000)
        #expect(counter.withLock { $0 } == 20_000)
    }

    #if DEBUG
    @Test("debug builds stop a thread that takes a second item's lock while it holds one, as sharing could deadlock")
    func nestedItemLocksAreRefused() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ItemLock(itemID: 20).withLock { ItemLock(itemID: 21).withLock {} }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("an item's lock taken while this thread holds another"))
    }
    #endif
}
