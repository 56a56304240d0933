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
    /// The object of an entry that is not a boundary, unretained.
    @inlinable static func object(_ entry: UInt) -> Unmanaged<AnyObject> {
        Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: pointer(entry)).unsafelyUnwrapped)
    }

    /// For a slot holding `found` and a new `entry` (an object, count 0): the slot can absorb
    /// the entry exactly when the result is below `maxCount`. The xor is the coalesced count in
    /// the high 16 bits when the pointers match, and has low bits set when they differ;
    /// rotating it left by 16 puts the pointer difference high and the count low, so one
    /// unsigned compare checks "same object and count < 65535". A boundary (0) never matches.
    @inlinable static func coalescingKey(_ found: UInt, _ entry: UInt) -> UInt {
        let difference = found ^ entry
        return (difference &<< 16) | (difference &>> 48)
    }
}
