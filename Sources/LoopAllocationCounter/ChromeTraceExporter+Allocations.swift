import LoopInstruments

extension ChromeTraceExporter {
    /// Counter tracks of attributed memory, to add to a trace's events: "live bytes" (the
    /// loop thread's user live bytes at each callout's end), "callout memory" (each callout's
    /// allocated bytes and peak while it runs, 0 between) and "pool pages" (their net per
    /// callout).
    ///
    /// ```swift
    /// let json = ChromeTraceExporter.json(recorder.entries, allocations: attributor)
    /// ```
    public static func allocationEvents(callouts: [CalloutAllocation], turns: [TurnAllocation]) -> [String] {
        var out: [String] = []
        func counter(_ name: String, _ time: UInt64, _ args: [(String, String)]) {
            out.append(JSONText.object([("name", JSONText.string(name)), ("ph", "\"C\""), ("ts", JSONText.microseconds(time)),
                                        ("pid", "1"), ("args", JSONText.object(args))]))
        }
        for callout in callouts where callout.depth == 0 {
            counter("callout memory", callout.start.nanoseconds,
                    [("allocated", String(callout.user.bytes)), ("peak", String(callout.user.peak))])
            counter("callout memory", callout.end.nanoseconds, [("allocated", "0"), ("peak", "0")])
            counter("live bytes", callout.end.nanoseconds, [("user", String(callout.liveBytesAtEnd))])
            if callout.poolPages.allocations + callout.poolPages.frees > 0 {
                counter("pool pages", callout.end.nanoseconds, [("net", String(callout.poolPages.net))])
            }
        }
        for turn in turns {
            counter("turn memory", turn.start.nanoseconds, [("peak", String(turn.user.peak)), ("net", String(turn.user.net))])
            counter("turn memory", turn.end.nanoseconds, [("peak", "0"), ("net", "0")])
        }
        return out
    }

    /// The trace of `entries` with the attributor's counter tracks added.
    public static func json(_ entries: [TraceEntry], allocations attributor: AllocationAttributor,
                            processName: String = "RunLoopKit") -> String {
        (events(entries, processName: processName)
            + allocationEvents(callouts: attributor.callouts, turns: attributor.turns)).joinedChromeTraceDocument()
    }
}
