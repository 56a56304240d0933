// The typed handle on one pool page, and the only code that reads or writes page memory (in the
// manner of swift-collections' _UnsafeHandle): the rest of the module goes through these
// accessors. A page is a plain address, owned by its thread's pool and freed explicitly, never
// by ARC.

import CPoolThreadWord
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A handle on one pool page (layout in `PageLayout`).
@usableFromInline @frozen
struct PoolPage: Equatable {
    @usableFromInline let base: UnsafeMutableRawPointer

    @inlinable init(_ base: UnsafeMutableRawPointer) { self.base = base }

    /// The page at `address`, or nil for 0. Nothing is read: a page reached from a token or a
    /// header field is trusted only after `checked()`.
    @inlinable init?(address: UInt) {
        guard let pointer = UnsafeMutableRawPointer(bitPattern: address) else { return nil }
        base = pointer
    }

    @inlinable var address: UInt { UInt(bitPattern: base) }
    @inlinable var begin: UInt { address &+ UInt(PageLayout.headerSize) }
    @inlinable var end: UInt { address &+ UInt(PageLayout.size) }

    // MARK: Header

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

    // MARK: Slots (`slot` is the address of a slot of this page)

    @inlinable func entry(at slot: UInt) -> UInt {
        UnsafeRawPointer(bitPattern: slot).unsafelyUnwrapped.load(as: UInt.self)
    }
    @inlinable func setEntry(_ entry: UInt, at slot: UInt) {
        UnsafeMutableRawPointer(bitPattern: slot).unsafelyUnwrapped.storeBytes(of: entry, as: UInt.self)
    }

    /// Moves the caller's reference into the free `slot`: no retain, no release.
    @inlinable @inline(__always)
    func moveObject<T: AnyObject>(_ object: consuming T, to slot: UInt) {
        _ = UnsafeMutableRawPointer(bitPattern: slot).unsafelyUnwrapped.initializeMemory(as: T.self, to: object)
    }

    /// Moves the `count` entries above `slot` down by one slot, over `slot` (the LRU
    /// move-to-top; the caller then writes the top slot).
    func shiftDown(onto slot: UInt, count: Int) {
        guard count > 0 else { return }
        UnsafeMutableRawPointer(bitPattern: slot).unsafelyUnwrapped.copyMemory(
            from: UnsafeRawPointer(bitPattern: slot &+ 8).unsafelyUnwrapped, byteCount: count * 8)
    }

    // MARK: Checks (objc4's magic_t fastcheck and check)

    /// The four magic words as they are now, for a corruption report.
    var magic: (UInt32, UInt32, UInt32, UInt32) {
        (base.load(fromByteOffset: 0, as: UInt32.self), base.load(fromByteOffset: 4, as: UInt32.self),
         base.load(fromByteOffset: 8, as: UInt32.self), base.load(fromByteOffset: 12, as: UInt32.self))
    }

    /// objc4's fastcheck: the first magic word only, one load and one compare.
    @inlinable var hasMagicPrefix: Bool {
        base.load(fromByteOffset: PageLayout.magicOffset, as: UInt32.self) == PageLayout.magic0
    }

    /// All four magic words.
    @usableFromInline var hasValidMagic: Bool {
        let found = magic
        let expected = PageLayout.magicWords
        return found.0 == expected.0 && found.1 == expected.1 && found.2 == expected.2 && found.3 == expected.3
    }

    /// objc4's check(): the whole magic, and the page belongs to the calling thread.
    @usableFromInline var isIntact: Bool { hasValidMagic && thread == currentThreadID() }

    /// The check of this build: the full one in debug builds (or with
    /// `-Xswiftc -DAUTORELEASE_INTERNAL_CHECKS`), the first magic word otherwise.
    @inlinable var passesCheck: Bool {
        #if DEBUG || AUTORELEASE_INTERNAL_CHECKS
        return isIntact
        #else
        return hasMagicPrefix
        #endif
    }

    /// This page, once it passed `passesCheck`. Every page reached through a header field or a
    /// token goes through here before anything else of it is read (the pop and print paths).
    @inline(__always)
    func checked() throws(CorruptPage) -> PoolPage {
        guard passesCheck else { throw CorruptPage(page: self) }
        return self
    }

    /// The parent, checked. `self` must have passed its own check.
    @inline(__always)
    func checkedParent() throws(CorruptPage) -> PoolPage? { try parent?.checked() }

    /// The child, checked. `self` must have passed its own check.
    @inline(__always)
    func checkedChild() throws(CorruptPage) -> PoolPage? { try child?.checked() }

    /// The coldest page of this chain, checking every page on the way (`self` included).
    func checkedColdest() throws(CorruptPage) -> PoolPage {
        var page = try checked()
        while let parent = try page.checkedParent() { page = parent }
        return page
    }

    // MARK: Life cycle

    /// Allocates and initialises a page hotter than `parent` (or the cold page).
    static func allocate(parent: PoolPage?, thread: UInt) -> PoolPage {
        var memory: UnsafeMutableRawPointer?
        rlk_pool_page_scope(1)
        let status = posix_memalign(&memory, PageLayout.size, PageLayout.size)
        rlk_pool_page_scope(0)
        guard status == 0, let memory else {
            PoolDiagnostics.fatalSystemCallFailure("posix_memalign(4096, 4096)", status: status,
                                                   consequence: "no memory for a pool page")
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
            if let child = parent.child {
                PoolDiagnostics.fatal("pool.page-corrupted",
                                      "autorelease pool page \(hex(parent.address)) already has the child \(hex(child.address))",
                                      item: hex(parent.address))
            }
            parent.child = page
        }
        return page
    }

    /// Frees this page and every hotter page, hottest first, without recursion (objc4's kill()).
    /// Returns the number of pages freed. Each page is checked before its child is followed;
    /// a corrupted one is reported and traps.
    @discardableResult
    func killWithChildren() -> Int {
        var hottest = self
        do {
            hottest = try checked()
            while let child = try hottest.checkedChild() { hottest = child }
        } catch {
            PoolDiagnostics.corruptPage(error.page)
        }
        var freed = 0
        while true {
            let parent = hottest.parent
            let isSelf = hottest == self
            // objc4 zeroes the magic so a stale token into a freed-but-reused page fails the check.
            hottest.base.storeBytes(of: UInt64(0), toByteOffset: 0, as: UInt64.self)
            hottest.base.storeBytes(of: UInt64(0), toByteOffset: 8, as: UInt64.self)
            rlk_pool_page_scope(1)
            free(hottest.base)
            rlk_pool_page_scope(0)
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

/// A page that failed its magic check (objc4's "busted" page). Holds the address: an error
/// must be Sendable, a page handle is not.
struct CorruptPage: Error {
    let address: UInt
    init(page: PoolPage) { address = page.address }
    var page: PoolPage { PoolPage(address: address).unsafelyUnwrapped }
}
