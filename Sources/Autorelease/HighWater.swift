// objc4's printHiwat: run at the start of a pop when high-water tracking is on.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

enum HighWater {
    static func update(hot: PoolPage, print: Bool) {
        let mark = hot.depth &* UInt32(PageLayout.hiwatPageWeight) &+ UInt32(hot.usedSlots)
        // objc4 >= 818: only a rise of more than 256 counts.
        guard mark > hot.hiwat &+ 256 else { return }
        var page: PoolPage? = hot
        while let current = page {
            current.hiwat = mark
            page = current.parent
        }
        guard print else { return }
        Diagnostics.inform("POOL HIGHWATER: new high water mark of \(mark) pending releases for thread \(hex(currentThreadID())):")
        var extra: UInt = 0
        page = hot
        while let current = page {
            var slot = current.begin
            while slot < current.next {
                extra &+= Entry.count(current.entry(at: slot))
                slot &+= 8
            }
            page = current.parent
        }
        if extra > 0 {
            Diagnostics.inform("POOL HIGHWATER: extra sequential autoreleases of objects: \(extra)")
        }
    }
}
