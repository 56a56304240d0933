import RunLoopCore

extension Loop {
    /// A description of the observers of `modes` (default: every mode of the loop), laid out like
    /// the observer part of `po CFRunLoopGetMain()`: one line per observer in call order with its
    /// order, activities in hex and label.
    ///
    /// ```swift
    /// _ = StandardObservers(installedOn: loop)
    /// print(loop.observerDump(modes: [.default]))
    /// // kCFRunLoopDefaultMode observers = (
    /// //     0 : <LoopObserver>{valid = Yes, activities = 0x1, repeats = Yes, order = -2147483647, callout = _wrapRunLoopWithAutoreleasePoolHandler}
    /// //     ...
    /// ```
    public func observerDump(modes: [Loop.Mode]? = nil) -> String {
        var lines: [String] = []
        for mode in modes ?? allModes {
            lines.append("\(mode.name) observers = (")
            for (index, observer) in observers(in: mode).enumerated() {
                lines.append("    \(index) : \(observer.dumpDescription)")
            }
            lines.append(")")
        }
        return lines.joined(separator: "\n")
    }
}

extension LoopObserver {
    /// One observer as `CFRunLoopObserver`'s description prints it, with the label as the callout.
    public var dumpDescription: String {
        "<LoopObserver>{valid = \(isValid ? "Yes" : "No"), activities = 0x\(String(activities.rawValue, radix: 16)), "
            + "repeats = \(repeats ? "Yes" : "No"), order = \(order), callout = \(label)}"
    }
}
