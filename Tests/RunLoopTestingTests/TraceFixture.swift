import RunLoopTesting

/// Traces written by hand, entry by entry, so the attribution is checked against a trace the
/// code under test did not produce.
enum TraceFixture {
    /// One run: pass 1 waits and a timer fires; pass 2 performs a source0 (which logs); pass 3
    /// follows at once, waits, and commits at BeforeWaiting (the layout logs inside the commit
    /// observer); the run times out.
    static let timerSourceCommit: [TraceEntry] = build([
        (.runBegin, "", 0), (.activity(.entry), "", 0),
        (.activity(.beforeTimers), "", 1), (.activity(.beforeSources), "", 1), (.activity(.beforeWaiting), "", 1),
        (.sleep, "", 1), (.wake, "", 1), (.activity(.afterWaiting), "", 1),
        (.calloutBegin(.timer), "t1", 1), (.calloutEnd(.timer), "t1", 1),
        (.activity(.beforeTimers), "", 2), (.activity(.beforeSources), "", 2),
        (.calloutBegin(.source0), "s", 2), (.log, "x", 2), (.calloutEnd(.source0), "s", 2),
        (.activity(.beforeTimers), "", 3), (.activity(.beforeSources), "", 3), (.activity(.beforeWaiting), "", 3),
        (.calloutBegin(.observer), "CA::Transaction::observer_callback", 3), (.log, "cellForRow", 3),
        (.commit(CommitRecord(frame: 1, reason: "beforeWaiting", phases: [.init(name: "layout", layers: ["root"]),
                                                                           .init(name: "display", layers: ["root"])])), "commit", 3),
        (.calloutEnd(.observer), "CA::Transaction::observer_callback", 3),
        (.sleep, "", 3), (.wake, "", 3), (.activity(.afterWaiting), "", 3), (.activity(.exit), "", 3),
        (.runEnd(.timedOut), "", 3),
    ])

    static func build(_ rows: [(TraceEntry.Kind, String, UInt64)]) -> [TraceEntry] {
        rows.enumerated().map { index, row in
            TraceEntry(sequence: UInt64(index), kind: row.0, label: row.1, mode: .default, pass: row.2,
                       time: LoopInstant(nanoseconds: UInt64(index) * 1_000), thread: 1)
        }
    }
}
