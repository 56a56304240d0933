// The page: objc4's `AutoreleasePoolPageData` laid out byte for byte (64-bit).
//
//   offset  size  field
//        0    16  magic   0xA1A1A1A1 "AUTORELEASE!"
//       16     8  next    first free slot (the stack top)
//       24     8  thread  owning pthread_t
//       32     8  parent  colder page (nil for the cold page)
//       40     8  child   hotter page, or a cached empty page
//       48     4  depth   0 for the cold page, parent.depth + 1 otherwise
//       52     4  hiwat   high-water mark, copied from the parent
//       56  4040  505 slots of one word each
//
// Pages are allocated with posix_memalign(4096, 4096), so any slot address masked with
// ~4095 gives its page: that is how a token finds its page in O(1).

/// Sizes and offsets of a pool page. Exposed to inlinable fast paths only.
@usableFromInline
enum PageLayout {
    @usableFromInline static let size = 4096
    @usableFromInline static let pageMask: UInt = ~UInt(4095)
    @usableFromInline static let magicOffset = 0
    @usableFromInline static let nextOffset = 16
    @usableFromInline static let threadOffset = 24
    @usableFromInline static let parentOffset = 32
    @usableFromInline static let childOffset = 40
    @usableFromInline static let depthOffset = 48
    @usableFromInline static let hiwatOffset = 52
    /// sizeof(AutoreleasePoolPageData) on LP64.
    @usableFromInline static let headerSize = 56
    /// (4096 - 56) / 8.
    @usableFromInline static let slotCount = 505
    /// objc4's COUNT (SIZE / sizeof(id)): only the high-water arithmetic uses it.
    @usableFromInline static let hiwatPageWeight = 512
    /// Below this many used slots a page is "less than half full" (objc4 hysteresis).
    @usableFromInline static let halfFullSlots = 252
    /// objc4's magic: m[0] = 0xA1A1A1A1, m[1...3] = "AUTORELEASE!" (no NUL). m[0] alone is
    /// the fast check of release builds.
    @usableFromInline static let magic0: UInt32 = 0xA1A1_A1A1
    static let magicWords: (UInt32, UInt32, UInt32, UInt32) = (magic0, 0x4F54_5541, 0x454C_4552, 0x2145_5341)
    /// Released slots are overwritten with this byte (objc4's SCRIBBLE).
    @usableFromInline static let scribble: UInt = 0xA3A3_A3A3_A3A3_A3A3
}
