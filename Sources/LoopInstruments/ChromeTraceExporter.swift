import RunLoopCore

/// Writes a trace as Chrome trace-event JSON (`{"traceEvents":[…]}`), which Perfetto
/// (ui.perfetto.dev) and chrome://tracing open: callouts, runs and sleeps as B/E slices,
/// activities, logs, marks, pool operations and lag reports as instant events, memory and
/// pool figures as counter tracks, commit phases with known times as complete (X) events.
///
/// ```swift
/// let json = ChromeTraceExporter.json(recorder.entries)
/// try json.write(toFile: "trace.json")          // or any file API; then open it in Perfetto
/// ```
public enum ChromeTraceExporter {
    /// The whole document; one event per line.
    public static func json(_ entries: [TraceEntry], processName: String = "RunLoopKit") -> String {
        events(entries, processName: processName).joinedChromeTraceDocument()
    }

    /// The encoded events (each a JSON object), metadata first.
    public static func events(_ entries: [TraceEntry], processName: String = "RunLoopKit") -> [String] {
        var out: [String] = []
        let pid = "1"
        out.append(JSONText.object([("name", JSONText.string("process_name")), ("ph", "\"M\""), ("pid", pid),
                                    ("args", JSONText.object([("name", JSONText.string(processName))]))]))
        var threadsSeen: Set<Int> = []
        for entry in entries where threadsSeen.insert(entry.thread).inserted {
            out.append(JSONText.object([("name", JSONText.string("thread_name")), ("ph", "\"M\""), ("pid", pid),
                                        ("tid", String(entry.thread)),
                                        ("args", JSONText.object([("name", JSONText.string("loop thread \(entry.thread)"))]))]))
        }

        // Open slices per thread, so an end whose begin was dropped is skipped and every
        // slice still open at the end is closed: B/E must balance for the viewers.
        var open: [Int: [String]] = [:]
        var lastTime: UInt64 = entries.last?.time.nanoseconds ?? 0

        func event(_ name: String, _ phase: String, _ entry: TraceEntry, category: String,
                   args: [(String, String)] = [], extra: [(String, String)] = []) -> String {
            var members: [(String, String)] = [
                ("name", JSONText.string(name)), ("cat", JSONText.string(category)), ("ph", JSONText.string(phase)),
                ("ts", JSONText.microseconds(entry.time)), ("pid", pid), ("tid", String(entry.thread)),
            ]
            members += extra
            var allArgs = args
            allArgs.append(("pass", String(entry.pass)))
            if let mode = entry.mode { allArgs.append(("mode", JSONText.string(mode.name))) }
            allArgs.append(("seq", String(entry.sequence)))
            members.append(("args", JSONText.object(allArgs)))
            return JSONText.object(members)
        }

        func begin(_ name: String, _ entry: TraceEntry, category: String, args: [(String, String)] = []) {
            open[entry.thread, default: []].append(name)
            out.append(event(name, "B", entry, category: category, args: args))
        }

        func end(_ name: String, _ entry: TraceEntry, category: String) {
            guard let top = open[entry.thread]?.last, top == name else { return }
            open[entry.thread]!.removeLast()
            out.append(event(name, "E", entry, category: category))
        }

        for entry in entries {
            lastTime = max(lastTime, entry.time.nanoseconds)
            switch entry.kind {
            case .activity(let activity):
                out.append(event(ActivityNames.cfName(activity), "i", entry, category: "activity", extra: [("s", "\"t\"")]))
            case .calloutBegin(let kind):
                begin(entry.label, entry, category: "callout", args: [("kind", JSONText.string("\(kind)"))])
            case .calloutEnd:
                end(entry.label, entry, category: "callout")
            case .runBegin:
                begin("run \(entry.mode?.name ?? "")", entry, category: "run")
            case .runEnd(let result):
                if let top = open[entry.thread]?.last, top == "sleep" { end("sleep", entry, category: "wait") }
                end("run \(entry.mode?.name ?? "")", entry, category: "run")
                out.append(event("run result \(result)", "i", entry, category: "run", extra: [("s", "\"t\"")]))
            case .sleep:
                begin("sleep", entry, category: "wait")
            case .wake:
                end("sleep", entry, category: "wait")
            case .log:
                out.append(event(entry.label, "i", entry, category: "log", extra: [("s", "\"t\"")]))
            case .mark:
                out.append(event(entry.label, "i", entry, category: "mark", extra: [("s", "\"t\"")]))
            case .pool(let pool):
                out.append(event("pool \(pool.operation.rawValue)", "i", entry, category: "pool",
                                 args: [("entriesBefore", String(pool.entriesBefore)), ("entriesAfter", String(pool.entriesAfter)),
                                        ("released", String(pool.released))],
                                 extra: [("s", "\"t\"")]))
                out.append(JSONText.object([("name", "\"autorelease pool\""), ("ph", "\"C\""), ("ts", JSONText.microseconds(entry.time)),
                                            ("pid", pid), ("args", JSONText.object([("entries", String(pool.entriesAfter))]))]))
            case .commit(let commit):
                let layers = "[" + commit.layers.map(JSONText.string).joined(separator: ",") + "]"
                out.append(event("commit #\(commit.frame)", "i", entry, category: "commit",
                                 args: [("reason", JSONText.string(commit.reason)), ("layers", layers),
                                        ("phases", "[" + commit.phases.map { JSONText.string($0.name) }.joined(separator: ",") + "]")],
                                 extra: [("s", "\"t\"")]))
                for phase in commit.phases {
                    guard let start = phase.start, let stop = phase.end, stop >= start else { continue }
                    out.append(JSONText.object([
                        ("name", JSONText.string(phase.name)), ("cat", "\"commit\""), ("ph", "\"X\""),
                        ("ts", JSONText.microseconds(start)), ("dur", JSONText.microseconds(stop.nanoseconds - start.nanoseconds)),
                        ("pid", pid), ("tid", String(entry.thread)),
                        ("args", JSONText.object([("layers", "[" + phase.layers.map(JSONText.string).joined(separator: ",") + "]")])),
                    ]))
                }
            case .memory(let sample):
                let ts = JSONText.microseconds(entry.time)
                out.append(JSONText.object([("name", "\"pool entries\""), ("ph", "\"C\""), ("ts", ts), ("pid", pid),
                                            ("args", JSONText.object([("pending", String(sample.pool.pendingEntries)),
                                                                      ("peak", String(sample.pool.peakEntries))]))]))
                out.append(JSONText.object([("name", "\"memory bytes\""), ("ph", "\"C\""), ("ts", ts), ("pid", pid),
                                            ("args", JSONText.object([("rss", String(sample.residentBytes)),
                                                                      ("heap", String(sample.heapInUseBytes)),
                                                                      ("pool", String(sample.pool.bytes))]))]))
            case .lag(let report):
                out.append(event("lag \(report.calloutLabel ?? "(no callout)")", "i", entry, category: "lag",
                                 args: [("spanNs", String(report.spanNanoseconds)),
                                        ("stack", "[" + report.calloutStack.map(JSONText.string).joined(separator: ",") + "]")],
                                 extra: [("s", "\"p\"")]))
            }
        }
        // Close what is still open, innermost first.
        for thread in open.keys.sorted() {
            for name in open[thread]!.reversed() {
                out.append(JSONText.object([("name", JSONText.string(name)), ("ph", "\"E\""), ("ts", JSONText.microseconds(lastTime)),
                                            ("pid", pid), ("tid", String(thread))]))
            }
        }
        return out
    }
}

extension [String] {
    package func joinedChromeTraceDocument() -> String {
        "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n" + joined(separator: ",\n") + "\n]}\n"
    }
}

extension TraceRecorder {
    /// The kept entries as Chrome trace-event JSON (see `ChromeTraceExporter`).
    public func chromeTraceJSON(processName: String = "RunLoopKit") -> String {
        ChromeTraceExporter.json(entries, processName: processName)
    }
}
