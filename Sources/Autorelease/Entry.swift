// A slot holds one word: the object's address in the low 48 bits and, in the high 16 bits,
// how many extra autoreleases were coalesced into it (objc4 >= 818 `AutoreleasePoolEntry`).
// 0 is the pool boundary; an object's address is never 0.

@usableFromInline
enum Entry {
    @usableFromInline static let boundary: UInt = 0
    @usableFromInline static let pointerMask: UInt = (1 << 48) - 1
    @usableFromInline static let countUnit: UInt = 1 << 48
    @usableFromInline static let maxCount: UInt = 65535

    @inlinable static func pointer(_ entry: UInt) -> UInt { entry & pointerMask }
    @inlinable static func count(_ entry: UInt) -> UInt { entry >> 48 }
}
