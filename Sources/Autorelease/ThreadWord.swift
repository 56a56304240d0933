// The thread-local pool word (CPoolThreadWord) is the hot page's address (pages are 4096-aligned)
// with the thread's pool flags in the 12 low bits. One thread-local load therefore gives
// the fast paths both the hot page and the coalescing mode.
//
//   bits 12...63  hot page address (0: no page)
//   bit  0        empty-pool placeholder (objc4's EMPTY_POOL_PLACEHOLDER; only with no page)
//   bits 1...2    coalescing: 0 LRU, 1 top only, 2 off
//   bits 3...4    missing pool: 0 implicit cold page, 1 diagnose and leak, 2 fatal
//   bits 5...6    high water: 0 off, 1 track, 2 track and print
//   bit  11       flags initialised from the process defaults

@usableFromInline
enum ThreadWord {
    @usableFromInline static let placeholderBit: UInt = 1
    @usableFromInline static let coalescingShift: UInt = 1
    @usableFromInline static let coalescingMask: UInt = 0b11 << 1
    @usableFromInline static let missingPoolShift: UInt = 3
    @usableFromInline static let missingPoolMask: UInt = 0b11 << 3
    @usableFromInline static let highWaterShift: UInt = 5
    @usableFromInline static let highWaterMask: UInt = 0b11 << 5
    @usableFromInline static let initialisedBit: UInt = 1 << 11
    @usableFromInline static let flagsMask: UInt = 4095

    @inlinable static func page(_ word: UInt) -> UInt { word & PageLayout.pageMask }
    @inlinable static func flags(_ word: UInt) -> UInt { word & flagsMask }
}
