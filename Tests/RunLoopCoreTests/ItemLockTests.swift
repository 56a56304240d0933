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
    @Test("the lock table repeats every 256 ids; neighbouring ids get different mutexes, each on a cache line of its own")
    func stripesRepeatEvery256() {
        #expect(rlk_item_lock(3) == rlk_item_lock(3 + 256))
        #expect(rlk_item_lock(3) != rlk_item_lock(4))
        #expect(UnsafeRawPointer(rlk_item_lock(4)) - UnsafeRawPointer(rlk_item_lock(3)) == 64)
        ItemLock(itemID: 3).withLock { #expect(pthread_mutex_trylock(rlk_item_lock(3 + 256)) == EBUSY) }
        #expect(pthread_mutex_trylock(rlk_item_lock(3 + 256)) == 0)
        pthread_mutex_unlock(rlk_item_lock(3 + 256))
    }

    @Test("two threads, each on its own item of one shared stripe, take turns and lose no update")
    func sharedStripeSerialises() async {
        #expect(rlk_item_lock(40) == rlk_item_lock(40 + 256))
        // Guarded only by the two items' locks: a lost increment means they did not exclude each other.
        nonisolated(unsafe) var count = 0
        await withTaskGroup(of: Void.self) { group in
            for itemID: UInt64 in [40, 40 + 256] {
                group.addTask {
                    let lock = ItemLock(itemID: itemID)
                    for _ in 0..<10_000 { lock.withLock { count += 1 } }
                }
            }
        }
        #expect(count == 20_000)
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
