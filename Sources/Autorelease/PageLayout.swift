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

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// objc4's magic: m[0] = 0xA1A1A1A1, m[1...3] = "AUTORELEASE!" (no NUL).
    static let magicWords: (UInt32, UInt32, UInt32, UInt32) = (0xA1A1_A1A1, 0x4F54_5541, 0x454C_4552, 0x2145_5341)
    /// Released slots are overwritten with this byte (objc4's SCRIBBLE).
    @usableFromInline static let scribble: UInt = 0xA3A3_A3A3_A3A3_A3A3
}

/// A view of one pool page. A plain address: pages are owned by their thread's pool and
/// freed explicitly, never by ARC.
@usableFromInline @frozen
struct PoolPage: Equatable {
    @usableFromInline let base: UnsafeMutableRawPointer

    @inlinable init(_ base: UnsafeMutableRawPointer) { self.base = base }

    @inlinable init?(address: UInt) {
        guard let pointer = UnsafeMutableRawPointer(bitPattern: address) else { return nil }
        base = pointer
    }

    @inlinable var address: UInt { UInt(bitPattern: base) }
    @inlinable var begin: UInt { address &+ UInt(PageLayout.headerSize) }
    @inlinable var end: UInt { address &+ UInt(PageLayout.size) }

    @inlinable var next: UInt {
        get { base.load(fromByteOffset: PageLayout.nextOffset, as: UInt.self) }
        nonmutating set { base.storeBytes(of: newValue, toByteOffset: PageLayout.nextOffset, as: UInt.self) }
    }
    @inlinable var thread: UInt {
        base.load(fromByteOffset: PageLayout.threadOffset, as: UInt.self)
    }
    @inlinable var parent: PoolPage? {
        PoolPage(address: base.load(fromByteOffset: PageLayout.parentOffset, as: UInt.self))
    }
    @inlinable var child: PoolPage? {
        get { PoolPage(address: base.load(fromByteOffset: PageLayout.childOffset, as: UInt.self)) }
        nonmutating set {
            base.storeBytes(of: newValue?.address ?? 0, toByteOffset: PageLayout.childOffset, as: UInt.self)
        }
    }
    @inlinable var depth: UInt32 {
        base.load(fromByteOffset: PageLayout.depthOffset, as: UInt32.self)
    }
    @inlinable var hiwat: UInt32 {
        get { base.load(fromByteOffset: PageLayout.hiwatOffset, as: UInt32.self) }
        nonmutating set { base.storeBytes(of: newValue, toByteOffset: PageLayout.hiwatOffset, as: UInt32.self) }
    }

    @inlinable var isEmpty: Bool { next == begin }
    @inlinable var isFull: Bool { next == end }
    /// Used slots (boundaries, objects and coalesced entries alike).
    @inlinable var usedSlots: Int { Int(bitPattern: (next &- begin) / 8) }
    @inlinable var isLessThanHalfFull: Bool { usedSlots < PageLayout.halfFullSlots }

    @inlinable func entry(at slot: UInt) -> UInt {
        UnsafeRawPointer(bitPattern: slot).unsafelyUnwrapped.load(as: UInt.self)
    }
    @inlinable func setEntry(_ entry: UInt, at slot: UInt) {
        UnsafeMutableRawPointer(bitPattern: slot).unsafelyUnwrapped.storeBytes(of: entry, as: UInt.self)
    }

    var hasValidMagic: Bool {
        let m = PageLayout.magicWords
        return base.load(fromByteOffset: 0, as: UInt32.self) == m.0
            && base.load(fromByteOffset: 4, as: UInt32.self) == m.1
            && base.load(fromByteOffset: 8, as: UInt32.self) == m.2
            && base.load(fromByteOffset: 12, as: UInt32.self) == m.3
    }

    /// The coldest page of this chain.
    var coldest: PoolPage {
        var page = self
        while let parent = page.parent { page = parent }
        return page
    }

    /// Allocates and initialises a page hotter than `parent` (or the cold page).
    static func allocate(parent: PoolPage?, thread: UInt) -> PoolPage {
        var memory: UnsafeMutableRawPointer?
        let status = posix_memalign(&memory, PageLayout.size, PageLayout.size)
        guard status == 0, let memory else {
            fatalError("autorelease pool: posix_memalign(4096, 4096) failed with error \(status)")
        }
        let m = PageLayout.magicWords
        memory.storeBytes(of: m.0, toByteOffset: 0, as: UInt32.self)
        memory.storeBytes(of: m.1, toByteOffset: 4, as: UInt32.self)
        memory.storeBytes(of: m.2, toByteOffset: 8, as: UInt32.self)
        memory.storeBytes(of: m.3, toByteOffset: 12, as: UInt32.self)
        let page = PoolPage(memory)
        page.next = page.begin
        memory.storeBytes(of: thread, toByteOffset: PageLayout.threadOffset, as: UInt.self)
        memory.storeBytes(of: parent?.address ?? 0, toByteOffset: PageLayout.parentOffset, as: UInt.self)
        memory.storeBytes(of: 0, toByteOffset: PageLayout.childOffset, as: UInt.self)
        memory.storeBytes(of: parent.map { $0.depth + 1 } ?? 0, toByteOffset: PageLayout.depthOffset, as: UInt32.self)
        memory.storeBytes(of: parent?.hiwat ?? 0, toByteOffset: PageLayout.hiwatOffset, as: UInt32.self)
        if let parent {
            precondition(parent.child == nil, "autorelease pool: page \(parent) already has a child")
            parent.child = page
        }
        return page
    }

    /// Frees this page and every hotter page, hottest first, without recursion (objc4's kill()).
    /// Returns the number of pages freed.
    @discardableResult
    func killWithChildren() -> Int {
        var hottest = self
        while let child = hottest.child { hottest = child }
        var freed = 0
        while true {
            let parent = hottest.parent
            let isSelf = hottest == self
            // objc4 zeroes the magic so a stale token into a freed-but-reused page fails fastcheck.
            hottest.base.storeBytes(of: UInt64(0), toByteOffset: 0, as: UInt64.self)
            hottest.base.storeBytes(of: UInt64(0), toByteOffset: 8, as: UInt64.self)
            free(hottest.base)
            freed += 1
            if isSelf {
                parent?.child = nil
                return freed
            }
            hottest = parent.unsafelyUnwrapped
        }
    }
}

extension PoolPage: CustomStringConvertible {
    @usableFromInline var description: String { hex(address) }
}

/// "0x…" like %p.
func hex(_ value: UInt) -> String { "0x" + String(value, radix: 16) }
