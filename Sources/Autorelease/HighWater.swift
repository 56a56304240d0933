// objc4's printHiwat: run at the start of a pop when high-water tracking is on.

import RunLoopDiagnostics

enum HighWater {
    /// Raises the mark of `hot` (checked by the pop) and its ancestors; with `report`, reports
    /// the new mark as `pool.high-water`.
    static func update(hot: PoolPage, report: Bool) {
        let mark = hot.depth &* UInt32(PageLayout.hiwatPageWeight) &+ UInt32(hot.usedSlots)
        // objc4 >= 818: only a rise of more than 256 counts.
        guard mark > hot.hiwat &+ 256 else { return }
        var extra: UInt = 0
        var page: PoolPage? = hot
        while let current = page {
            current.hiwat = mark
            if report {
                var slot = current.begin
                while slot < current.next {
                    extra &+= Entry.count(current.entry(at: slot))
                    slot &+= 8
                }
            }
            page = current.parent.map(ThreadPool.verified)
        }
        guard report else { return }
        let thread = hex(currentThreadID())
        var message = "POOL HIGHWATER: new high water mark of \(mark) pending releases for thread \(thread)"
        if extra > 0 {
            message += "; POOL HIGHWATER: extra sequential autoreleases of objects: \(extra)"
        }
        // The item names the mark, so that each new mark is printed by the default handler.
        Diagnostics.report(.info, "pool.high-water", message, item: "thread \(thread), mark \(mark)")
    }
}
