// objc4's _objc_autoreleasePoolPrint layout, with Swift type names where objc4 prints classes.

import RunLoopDiagnostics
import Synchronization

/// Numbers the prints, so that the default handler (which prints an id and item once) prints
/// every one that was asked for.
private let printCount = Atomic<Int>(0)

extension AutoreleasePool {
    /// The calling thread's pools in `_objc_autoreleasePoolPrint`'s layout, one string per line
    /// (objc4 prefixes each with `objc[pid]: `). Every page is checked before it is printed; a
    /// corrupted page is reported (`pool.page-corrupted`, severity `.error`), printed as
    /// `PAGE (corrupted)` and ends the listing, as objc4's `check(false)`.
    ///
    /// ```swift
    /// for line in AutoreleasePool.debugLines() { print(line) }
    /// ```
    public static func debugLines() -> [String] {
        let word = ThreadPool.loadWord()
        var lines = ["##############", "AUTORELEASE POOLS for thread \(hex(currentThreadID()))"]
        guard let hot = ThreadPool.hotPage(word) else {
            lines.append("0 releases pending.")
            if word & ThreadWord.placeholderBit != 0 {
                lines.append("[0x1]  ................  PAGE (placeholder)")
                lines.append("[0x1]  ################  POOL (placeholder)")
            }
            lines.append("##############")
            return lines
        }
        let cold: PoolPage
        do {
            cold = try hot.checkedColdest()
        } catch {
            PoolDiagnostics.reportCorruptPage(error.page)
            lines.append("[\(hex(error.page.address))]  ................  PAGE (corrupted)")
            lines.append("##############")
            return lines
        }
        lines.append("\(ThreadPool.pendingEntries(word)) releases pending.")
        var page: PoolPage? = cold
        while let current = page {
            lines.append("[\(hex(current.address))]  ................  PAGE \(current.isFull ? "(full)" : "") "
                + "\(current == hot ? "(hot)" : "") \(current == cold ? "(cold)" : "")")
            var slot = current.begin
            while slot < current.next {
                let entry = current.entry(at: slot)
                if entry == Entry.boundary {
                    lines.append("[\(hex(slot))]  ################  POOL \(hex(slot))")
                } else {
                    let name = PoolDiagnostics.typeName(of: Entry.object(entry).takeUnretainedValue())
                    let count = Entry.count(entry)
                    lines.append("[\(hex(slot))]  \(padded(hex(Entry.pointer(entry))))  \(name)"
                        + (count > 0 ? "  autorelease count \(count + 1)" : ""))
                }
                slot &+= 8
            }
            do {
                page = try current.checkedChild()
            } catch {
                PoolDiagnostics.reportCorruptPage(error.page)
                lines.append("[\(hex(error.page.address))]  ................  PAGE (corrupted)")
                page = nil
            }
        }
        lines.append("##############")
        return lines
    }

    /// Reports `debugLines()` as one `pool.debug-print` diagnostic (severity `.info`), so it goes
    /// wherever the process sends diagnostics: by default one block on standard error.
    ///
    /// ```swift
    /// AutoreleasePool.printPools()
    /// ```
    public static func printPools() {
        let lines = debugLines()
        let number = printCount.add(1, ordering: .relaxed).newValue
        Diagnostics.report(.info, "pool.debug-print", lines.joined(separator: "\n"),
                           item: "thread \(hex(currentThreadID())), print \(number)")
    }

    /// `%#16lx`: right-aligned in 16 columns.
    private static func padded(_ text: String) -> String {
        text.count >= 16 ? text : String(repeating: " ", count: 16 - text.count) + text
    }
}
