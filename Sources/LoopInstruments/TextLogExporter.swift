import RunLoopCore

/// Renders a trace as text: the plain form prints activities by CF name and user log lines
/// verbatim, one per line, exactly like the `NSLog` output in the seed write-ups; the verbose
/// form adds sequence, time, pass, mode and callouts.
///
/// ```swift
/// let expected = ["kCFRunLoopAfterWaiting", "kCFRunLoopBeforeTimers", "kCFRunLoopBeforeSources", "reloadData"]
/// #expect(TextLogExporter.lines(recorder.entries, filter: .seed).prefix(4) == expected[...])
/// ```
public enum TextLogExporter {
    /// One line per shown entry, plain form.
    public static func lines(_ entries: [TraceEntry], filter: TextLogFilter = .cfNames) -> [String] {
        filter.apply(to: entries).map(plainLine)
    }

    /// The plain lines joined with newlines (with a final newline when not empty).
    public static func text(_ entries: [TraceEntry], filter: TextLogFilter = .cfNames) -> String {
        joined(lines(entries, filter: filter))
    }

    /// One line per shown entry with `#sequence`, time relative to the first shown entry,
    /// thread, pass and mode; callouts are indented by nesting depth.
    public static func verboseLines(_ entries: [TraceEntry], filter: TextLogFilter = .everything) -> [String] {
        let shown = filter.apply(to: entries)
        guard let origin = shown.first?.time else { return [] }
        var depth = 0
        return shown.map { entry in
            if case .calloutEnd = entry.kind { depth = max(0, depth - 1) }
            let indent = String(repeating: "  ", count: depth)
            if case .calloutBegin = entry.kind { depth += 1 }
            let time = formatMilliseconds(entry.time.nanoseconds &- origin.nanoseconds)
            let mode = entry.mode?.name ?? "-"
            return "#\(entry.sequence) +\(time)ms t\(entry.thread) pass \(entry.pass) [\(mode)] \(indent)\(verboseBody(entry))"
        }
    }

    /// The verbose lines joined with newlines.
    public static func verboseText(_ entries: [TraceEntry], filter: TextLogFilter = .everything) -> String {
        joined(verboseLines(entries, filter: filter))
    }

    static func joined(_ lines: [String]) -> String {
        lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
    }

    /// The plain form of one entry.
    public static func plainLine(_ entry: TraceEntry) -> String {
        switch entry.kind {
        case .activity(let activity): return ActivityNames.cfName(activity)
        case .log: return entry.label
        default: return verboseBody(entry)
        }
    }

    static func verboseBody(_ entry: TraceEntry) -> String {
        switch entry.kind {
        case .activity(let activity): return ActivityNames.cfName(activity)
        case .log: return entry.label
        case .mark: return "mark \(entry.label)"
        case .calloutBegin(let kind): return "→ \(kind) \(entry.label)"
        case .calloutEnd(let kind): return "← \(kind) \(entry.label)"
        case .sleep: return "sleep"
        case .wake: return "wake"
        case .runBegin: return "run begin"
        case .runEnd(let result): return "run end \(result)"
        case .pool(let pool):
            return "pool \(pool.operation.rawValue) entries \(pool.entriesBefore)→\(pool.entriesAfter)"
                + (pool.operation == .push ? "" : " released \(pool.released)")
        case .commit(let commit):
            let phases = commit.phases.map { phase in
                phase.layers.isEmpty ? phase.name : "\(phase.name)(\(phase.layers.joined(separator: ",")))"
            }
            let reason = commit.reason.isEmpty ? "" : " [\(commit.reason)]"
            return "commit #\(commit.frame)\(reason)" + (phases.isEmpty ? "" : " " + phases.joined(separator: " "))
        case .memory(let sample):
            return "memory \(sample.label) pool \(sample.pool.pendingEntries) entries/\(sample.pool.pages) pages"
                + " rss \(formatBytes(sample.residentBytes)) heap \(formatBytes(sample.heapInUseBytes))"
        case .lag(let report):
            return "lag \(formatMilliseconds(report.spanNanoseconds))ms in \(report.calloutLabel ?? "(no callout)")"
        }
    }

    /// Nanoseconds as milliseconds with three decimals, without Foundation.
    static func formatMilliseconds(_ nanoseconds: UInt64) -> String {
        let micros = (nanoseconds + 500) / 1_000
        let fraction = String(micros % 1_000)
        return "\(micros / 1_000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    static func formatBytes(_ bytes: Int) -> String {
        if bytes >= 1 << 20 { return formatFixed(Double(bytes) / 1_048_576, decimals: 1) + "MiB" }
        if bytes >= 1 << 10 { return formatFixed(Double(bytes) / 1_024, decimals: 1) + "KiB" }
        return "\(bytes)B"
    }

    static func formatFixed(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled) - whole * Int(scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard decimals > 0 else { return sign + String(whole) }
        let digits = String(fraction)
        return sign + "\(whole)." + String(repeating: "0", count: decimals - digits.count) + digits
    }
}

extension TraceRecorder {
    /// Plain text lines of the kept entries (see `TextLogExporter.lines`).
    public func lines(_ filter: TextLogFilter = .cfNames) -> [String] {
        TextLogExporter.lines(entries, filter: filter)
    }

    /// Plain text of the kept entries.
    public func text(_ filter: TextLogFilter = .cfNames) -> String {
        TextLogExporter.text(entries, filter: filter)
    }

    /// Verbose text of the kept entries.
    public func verboseText(_ filter: TextLogFilter = .everything) -> String {
        TextLogExporter.verboseText(entries, filter: filter)
    }
}
