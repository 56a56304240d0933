// objc4's _objc_autoreleasePoolPrint layout, with Swift type names where objc4 prints classes.

extension AutoreleasePool {
    /// The calling thread's pools in `_objc_autoreleasePoolPrint`'s layout, one string per line
    /// (without the `objc[pid]: ` prefix).
    ///
    /// ```swift
    /// for line in AutoreleasePool.debugLines() { print(line) }
    /// ```
    public static func debugLines() -> [String] {
        let word = ThreadPool.loadWord()
        var lines = ["##############", "AUTORELEASE POOLS for thread \(hex(currentThreadID()))"]
        lines.append("\(ThreadPool.pendingEntries(word)) releases pending.")
        guard let hot = ThreadPool.hotPage(word) else {
            if word & ThreadWord.placeholderBit != 0 {
                lines.append("[0x1]  ................  PAGE (placeholder)")
                lines.append("[0x1]  ################  POOL (placeholder)")
            }
            lines.append("##############")
            return lines
        }
        let cold = hot.coldest
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
                    let pointer = Entry.pointer(entry)
                    let object = Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: pointer).unsafelyUnwrapped)
                        .takeUnretainedValue()
                    let name = Diagnostics.typeName(of: object)
                    let count = Entry.count(entry)
                    lines.append("[\(hex(slot))]  \(padded(hex(pointer)))  \(name)"
                        + (count > 0 ? "  autorelease count \(count + 1)" : ""))
                }
                slot &+= 8
            }
            page = current.child
        }
        lines.append("##############")
        return lines
    }

    /// Prints `debugLines()` to standard error, each line prefixed `objc[pid]: ` like objc4.
    ///
    /// ```swift
    /// AutoreleasePool.debugPrint()
    /// ```
    public static func debugPrint() {
        for line in debugLines() { Diagnostics.inform(line) }
    }

    /// `%#16lx`: right-aligned in 16 columns.
    private static func padded(_ text: String) -> String {
        text.count >= 16 ? text : String(repeating: " ", count: 16 - text.count) + text
    }
}
