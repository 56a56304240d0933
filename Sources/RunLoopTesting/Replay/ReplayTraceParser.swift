import RunLoopKit

extension ReplayTrace {
    /// Reads a trace written by ``text``. Blank lines and lines starting with `#` are skipped.
    ///
    /// Throws ``ReplayTraceError`` naming the line and field for: a missing or foreign header,
    /// another format version, an unknown kind or field, a missing, repeated or malformed field,
    /// an unterminated string, a `perform` line in a version 1 file, and a truncated file (no
    /// `end` line, or one whose count differs).
    ///
    /// ```swift
    /// let trace = try ReplayTrace(parsing: "runloopkit-trace 2\nclock start=0\nend entries=0\n")
    /// print(trace.entries.count)   // 0
    /// ```
    public init(parsing text: String) throws(ReplayTraceError) {
        var parser = ReplayTraceParser()
        self = try parser.parse(text)
    }
}

/// The reader behind ``ReplayTrace/init(parsing:)``: one line at a time, strict about fields.
private struct ReplayTraceParser {
    private var lineNumber = 0
    /// The version the header named.
    private var version = ReplayTrace.formatVersion

    mutating func parse(_ text: String) throws(ReplayTraceError) -> ReplayTrace {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        var index = 0
        func nextContentLine() -> String? {
            while index < lines.count {
                let line = lines[index]
                index += 1
                lineNumber = index
                let trimmed = line.drop { $0 == " " }
                if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
                return line
            }
            return nil
        }

        guard let header = nextContentLine() else {
            throw ReplayTraceError(line: max(lineNumber, 1), field: nil,
                                   message: "empty file: expected \"\(ReplayTraceText.magic) \(ReplayTrace.formatVersion)\"")
        }
        try readHeader(header)
        guard let clockLine = nextContentLine() else { throw truncated("the clock line") }
        let clock = try tokens(clockLine)
        guard clock.kind == "clock" else {
            throw error("kind", "expected the clock line \"clock start=NS\", found \"\(clock.kind)\"")
        }
        let start = try clock.fields.number("start", self)
        try clock.fields.rejectUnknown(self)

        var entries: [ReplayTraceEntry] = []
        var sourceLines: [Int] = []
        while let line = nextContentLine() {
            let parsed = try tokens(line)
            if parsed.kind == "end" {
                let count = try parsed.fields.number("entries", self)
                try parsed.fields.rejectUnknown(self)
                guard count == UInt64(entries.count) else {
                    throw error("entries", "the end line counts \(count) entries but the file holds \(entries.count): it was truncated or edited")
                }
                if nextContentLine() != nil { throw error(nil, "content after the end line") }
                var trace = ReplayTrace(clockStart: LoopInstant(nanoseconds: start), entries: entries)
                trace.sourceLines = sourceLines
                return trace
            }
            entries.append(try entry(parsed))
            sourceLines.append(lineNumber)
        }
        throw truncated("the end line \"end entries=\(entries.count)\"")
    }

    private mutating func readHeader(_ line: String) throws(ReplayTraceError) {
        let words = line.split(separator: " ")
        guard words.first.map(String.init) == ReplayTraceText.magic else {
            throw error("magic", "not a RunLoopKit trace: the first line must be \"\(ReplayTraceText.magic) \(ReplayTrace.formatVersion)\"")
        }
        guard words.count == 2, let version = Int(words[1]) else {
            throw error("version", "expected a version number after \"\(ReplayTraceText.magic)\"")
        }
        guard ReplayTrace.readableVersions.contains(version) else {
            let readable = ReplayTrace.readableVersions.map(String.init).joined(separator: " and ")
            throw error("version", "version \(version) is not supported (this reader reads \(readable))")
        }
        self.version = version
    }

    private func truncated(_ what: String) -> ReplayTraceError {
        ReplayTraceError(line: lineNumber, field: nil, message: "the file ends before \(what): it was truncated")
    }

    func error(_ field: String?, _ message: String) -> ReplayTraceError {
        ReplayTraceError(line: lineNumber, field: field, message: message)
    }

    // MARK: One entry

    private func entry(_ parsed: ParsedLine) throws(ReplayTraceError) -> ReplayTraceEntry {
        let fields = parsed.fields
        let pass = try fields.number("p", self)
        let mode = try fields.string("m", self)
        let time = try fields.number("t", self)
        let kind: ReplayTraceEntry.Kind
        switch parsed.kind {
        case "run-begin": kind = .runBegin
        case "run-end": kind = .runEnd(result: try fields.word("result", self))
        case "activity": kind = .activity(try fields.word("a", self))
        case "callout": kind = .calloutBegin(try callout(fields), label: try fields.string("label", self))
        case "return": kind = .calloutEnd(try callout(fields), label: try fields.string("label", self))
        case "sleep": kind = .sleep
        case "wake": kind = .wake
        case "commit": kind = .commit(frame: try fields.number("frame", self), reason: try fields.string("reason", self))
        case "pool": kind = .pool(operation: try fields.word("op", self))
        case "log": kind = .log(try fields.string("text", self))
        case "mark": kind = .mark(try fields.string("name", self))
        case "lag": kind = .lag(label: try fields.string("label", self))
        case "signal": kind = .input(ReplayInput(.signal(label: try fields.string("label", self)), origin: try origin(fields)))
        case "send":
            kind = .input(ReplayInput(.send(label: try fields.string("label", self), payload: try fields.string("payload", self)),
                                      origin: try origin(fields)))
        case "wakeup": kind = .input(ReplayInput(.wakeUp, origin: try origin(fields)))
        case "file-ready":
            let events = try fields.number("events", self)
            guard events <= UInt64(UInt32.max) else { throw error("events", "\(events) does not fit in 32 bits") }
            kind = .input(ReplayInput(.fileReady(label: try fields.string("label", self), events: UInt32(events)),
                                      origin: try origin(fields)))
        case "advance": kind = .input(ReplayInput(.advance(nanoseconds: try fields.number("by", self)), origin: try origin(fields)))
        case "perform":
            guard version >= 2 else {
                throw error("kind", "kind \"perform\" (a block from another thread) is new in version 2; this file says version \(version)")
            }
            kind = .input(ReplayInput(.perform(label: try fields.string("label", self)), origin: try origin(fields)))
        default:
            throw error("kind", "unknown entry kind \"\(parsed.kind)\"")
        }
        try fields.rejectUnknown(self)
        return ReplayTraceEntry(kind, pass: pass, mode: mode, time: LoopInstant(nanoseconds: time))
    }

    private func callout(_ fields: Fields) throws(ReplayTraceError) -> LoopEvent.Callout {
        let name = try fields.word("c", self)
        guard let callout = ReplayTraceText.calloutNames.first(where: { $0.1 == name })?.0 else {
            throw error("c", "unknown callout kind \"\(name)\" (one of \(ReplayTraceText.calloutNames.map(\.1).joined(separator: ", ")))")
        }
        return callout
    }

    private func origin(_ fields: Fields) throws(ReplayTraceError) -> ReplayInput.Origin {
        let word = try fields.word("from", self)
        guard let origin = ReplayInput.Origin(rawValue: word) else {
            throw error("from", "expected \"loop\" or \"external\", found \"\(word)\"")
        }
        return origin
    }

    // MARK: Tokens

    struct ParsedLine {
        var kind: String
        var fields: Fields
    }

    /// The fields of one line; each read marks its key used, so leftovers can be refused.
    final class Fields {
        var values: [String: (value: String, quoted: Bool)] = [:]
        var order: [String] = []
        var used: Set<String> = []

        func raw(_ key: String, _ parser: ReplayTraceParser) throws(ReplayTraceError) -> (value: String, quoted: Bool) {
            guard let found = values[key] else { throw parser.error(key, "missing field \"\(key)=\"") }
            used.insert(key)
            return found
        }

        func number(_ key: String, _ parser: ReplayTraceParser) throws(ReplayTraceError) -> UInt64 {
            let found = try raw(key, parser)
            guard !found.quoted, let value = UInt64(found.value) else {
                throw parser.error(key, "expected a non-negative integer, found \"\(found.value)\"")
            }
            return value
        }

        func word(_ key: String, _ parser: ReplayTraceParser) throws(ReplayTraceError) -> String {
            let found = try raw(key, parser)
            guard !found.quoted, !found.value.isEmpty else { throw parser.error(key, "expected a bare word, found \"\(found.value)\"") }
            return found.value
        }

        func string(_ key: String, _ parser: ReplayTraceParser) throws(ReplayTraceError) -> String {
            let found = try raw(key, parser)
            guard found.quoted else { throw parser.error(key, "expected a quoted string, found \(found.value)") }
            return found.value
        }

        func rejectUnknown(_ parser: ReplayTraceParser) throws(ReplayTraceError) {
            if let extra = order.first(where: { !used.contains($0) }) {
                throw parser.error(extra, "unknown field \"\(extra)\" for this kind of line")
            }
        }
    }

    /// Splits `kind key=value key="quoted value" …`.
    private func tokens(_ line: String) throws(ReplayTraceError) -> ParsedLine {
        let characters = Array(line)
        var index = 0
        func skipSpaces() { while index < characters.count && characters[index] == " " { index += 1 } }
        skipSpaces()
        var kind = ""
        while index < characters.count && characters[index] != " " { kind.append(characters[index]); index += 1 }
        let fields = Fields()
        while true {
            skipSpaces()
            if index >= characters.count { break }
            var key = ""
            while index < characters.count && characters[index] != "=" && characters[index] != " " {
                key.append(characters[index]); index += 1
            }
            guard index < characters.count, characters[index] == "=" else {
                throw error(key, "expected \"\(key)=VALUE\"")
            }
            index += 1
            var value = ""
            var quoted = false
            if index < characters.count && characters[index] == "\"" {
                quoted = true
                index += 1
                var closed = false
                while index < characters.count {
                    let character = characters[index]
                    index += 1
                    if character == "\"" { closed = true; break }
                    if character == "\\" {
                        guard index < characters.count else { break }
                        let escaped = characters[index]
                        index += 1
                        switch escaped {
                        case "n": value.append("\n")
                        case "\"", "\\": value.append(escaped)
                        default: throw error(key, "unknown escape \"\\\(escaped)\" in a string")
                        }
                        continue
                    }
                    value.append(character)
                }
                guard closed else { throw error(key, "unterminated string (no closing \")") }
            } else {
                while index < characters.count && characters[index] != " " { value.append(characters[index]); index += 1 }
            }
            guard fields.values[key] == nil else { throw error(key, "field \"\(key)\" appears twice") }
            fields.values[key] = (value, quoted)
            fields.order.append(key)
        }
        return ParsedLine(kind: kind, fields: fields)
    }
}
