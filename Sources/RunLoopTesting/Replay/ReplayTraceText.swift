import RunLoopKit

/// Writes a ``ReplayTrace`` in the line format of `Docs/Replay.md` (version 2):
///
///     runloopkit-trace 2
///     clock start=0
///     callout p=1 m="kCFRunLoopDefaultMode" t=0 c=source0 label="s0"
///     end entries=1
///
/// Every entry line is its kind, then `p=` (pass), `m=` (mode), `t=` (clock, ns), then the
/// kind's own fields. Strings are quoted with `\"`, `\\` and `\n` escaped.
enum ReplayTraceText {
    static let magic = "runloopkit-trace"
    /// The version line and the clock line.
    static let headerLineCount = 2

    static func text(_ trace: ReplayTrace) -> String {
        var lines = ["\(magic) \(ReplayTrace.formatVersion)", "clock start=\(trace.clockStart.nanoseconds)"]
        lines.reserveCapacity(trace.entries.count + 3)
        for entry in trace.entries { lines.append(line(entry)) }
        lines.append("end entries=\(trace.entries.count)")
        return lines.joined(separator: "\n") + "\n"
    }

    static func line(_ entry: ReplayTraceEntry) -> String {
        let (kind, fields) = kindAndFields(entry.kind)
        var text = "\(kind) p=\(entry.pass) m=\(quoted(entry.mode)) t=\(entry.time.nanoseconds)"
        for (key, value) in fields { text += " \(key)=\(value)" }
        return text
    }

    /// The kind's word and its own fields, values already quoted where they are strings.
    static func kindAndFields(_ kind: ReplayTraceEntry.Kind) -> (String, [(String, String)]) {
        switch kind {
        case .runBegin: return ("run-begin", [])
        case .runEnd(let result): return ("run-end", [("result", result)])
        case .activity(let name): return ("activity", [("a", name)])
        case .calloutBegin(let callout, let label): return ("callout", [("c", calloutName(callout)), ("label", quoted(label))])
        case .calloutEnd(let callout, let label): return ("return", [("c", calloutName(callout)), ("label", quoted(label))])
        case .sleep: return ("sleep", [])
        case .wake: return ("wake", [])
        case .commit(let frame, let reason): return ("commit", [("frame", "\(frame)"), ("reason", quoted(reason))])
        case .pool(let operation): return ("pool", [("op", operation)])
        case .log(let text): return ("log", [("text", quoted(text))])
        case .mark(let name): return ("mark", [("name", quoted(name))])
        case .lag(let label): return ("lag", [("label", quoted(label))])
        case .input(let input):
            let from = ("from", input.origin.rawValue)
            switch input.action {
            case .signal(let label): return ("signal", [from, ("label", quoted(label))])
            case .send(let label, let payload): return ("send", [from, ("label", quoted(label)), ("payload", quoted(payload))])
            case .wakeUp: return ("wakeup", [from])
            case .fileReady(let label, let events): return ("file-ready", [from, ("label", quoted(label)), ("events", "\(events)")])
            case .advance(let nanoseconds): return ("advance", [from, ("by", "\(nanoseconds)")])
            case .perform(let label): return ("perform", [from, ("label", quoted(label))])
            }
        }
    }

    static let calloutNames: [(LoopEvent.Callout, String)] = [
        (.observer, "observer"), (.block, "block"), (.source0, "source0"), (.source1, "source1"),
        (.fileSource, "fileSource"), (.timer, "timer"), (.mainQueue, "mainQueue"), (.job, "job"),
    ]

    static func calloutName(_ callout: LoopEvent.Callout) -> String {
        calloutNames.first { $0.0 == callout }?.1 ?? "observer"
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for character in text {
            switch character {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out + "\""
    }
}

extension ReplayTrace {
    /// The trace in the line format of `Docs/Replay.md`, ending with a newline.
    public var text: String { ReplayTraceText.text(self) }
}
