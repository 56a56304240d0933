import Testing
@testable import Autorelease

@Suite("AutoreleasePoolModel")
struct AutoreleasePoolModelTests {
    @Test("10,000 random push/autorelease/cleanup/pop sequences match the plain-array model")
    func randomSequencesMatchModel() {
        let problem = onFreshThread {
            primePool()
            return replayRandomSequences(seed: 0x5EED_2026, sequences: 10_000)
        }
        #expect(problem == nil, "\(problem ?? "")")
    }

    @Test("The model itself: LRU reorders, top-only and off do not")
    func modelSanity() {
        var lru = PoolModel(coalescing: .lru)
        _ = lru.push()
        for id in [1, 2, 3, 4, 1] { lru.autorelease(id: id) }
        #expect(lru.slots == [.boundary, .object(id: 2, count: 0), .object(id: 3, count: 0),
                              .object(id: 4, count: 0), .object(id: 1, count: 1)])
        var top = PoolModel(coalescing: .topOnly)
        _ = top.push()
        for id in [1, 2, 2, 1] { top.autorelease(id: id) }
        #expect(top.slots == [.boundary, .object(id: 1, count: 0), .object(id: 2, count: 1), .object(id: 1, count: 0)])
        top.pop(level: 0)
        #expect(top.expectedLog == [2, 1])   // 1 is still held by its first entry
    }
}
