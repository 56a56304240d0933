import Foundation
import Testing

/// Rule ids as code and docs cite them, and the ids `Docs/Rules.md` defines.
enum RuleIDs {
    /// A rule-shaped token: one or two capitals, one or two digits and an optional lowercase
    /// letter (`R4a`, `T10`, `AP3`), or a capital, a hyphen and one lowercase letter (`L-c`).
    /// It must stand alone: a letter, digit or underscore on either side makes it part of a
    /// word (`UInt64`, `Int16`, `0xA3`, `A1A1A1A1`, `x86_64`, `rlk_t2`).
    static let token = try! NSRegularExpression(
        pattern: #"(?<![A-Za-z0-9_])(?:[A-Z]{1,2}[0-9]{1,2}[a-z]?|[A-Z]-[a-z])(?![A-Za-z0-9_])"#)

    /// Rule-shaped tokens that are not rule ids, each with the reason. Keep this list short:
    /// prefer rewording the prose (e.g. "first-level cache" rather than "L1").
    static let notRules: [String: String] = [
        "LP64": "the 64-bit data model (longs and pointers are 64 bits), named where the pool's header size is given",
    ]

    /// The rule-shaped tokens in `text`, in order.
    static func citations(in text: String) -> [String] {
        let range = NSRange(text.startIndex..., in: text)
        return token.matches(in: text, range: range).compactMap { match in
            Range(match.range, in: text).map { String(text[$0]) }
        }.filter { notRules[$0] == nil }
    }

    /// The ids `Docs/Rules.md` defines: each entry is an explicit anchor `<a id="ID"></a>`
    /// on its own line, followed by a heading that starts with the same id.
    static func defined(inRulesText text: String) -> (ids: [String], problems: [String]) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let anchor = try! NSRegularExpression(pattern: #"^<a id="([^"]+)"></a>$"#)
        var ids: [String] = []
        var problems: [String] = []
        for (index, line) in lines.enumerated() {
            let range = NSRange(line.startIndex..., in: line)
            guard let match = anchor.firstMatch(in: line, range: range),
                  let idRange = Range(match.range(at: 1), in: line) else { continue }
            let id = String(line[idRange])
            let heading = lines.dropFirst(index + 1).first { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
            let title = heading.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            if !heading.hasPrefix("#") || !(title == id || title.hasPrefix(id + " ")) {
                problems.append("Docs/Rules.md:\(index + 1): anchor \(id) is not followed by a heading starting with \(id)")
            }
            if ids.contains(id) { problems.append("Docs/Rules.md:\(index + 1): \(id) is defined twice") }
            ids.append(id)
        }
        return (ids, problems)
    }

    static func rulesText() throws -> String {
        try String(contentsOf: RepositoryText.root.appendingPathComponent("Docs/Rules.md"), encoding: .utf8)
    }
}

@Suite("RepositoryChecks: rule ids")
struct RuleIDCitationTests {
    @Test("Every rule id cited in Sources, Tests, Docs, README and Benchmarks is defined in Docs/Rules.md")
    func citedIDsAreDefined() throws {
        let defined = Set(RuleIDs.defined(inRulesText: try RuleIDs.rulesText()).ids)
        #expect(defined.count > 50, "Docs/Rules.md defines only \(defined.count) ids; is the anchor format intact?")
        var missing: [String] = []
        var cited = 0
        for line in try RepositoryText.proseLines() where line.path != "Docs/Rules.md" {
            for id in RuleIDs.citations(in: line.text) {
                cited += 1
                if !defined.contains(id) { missing.append("\(line.location): \(id)  —  \(line.text.trimmingCharacters(in: .whitespaces))") }
            }
        }
        #expect(cited > 200, "only \(cited) citations found; is the scan reading the repository?")
        if !missing.isEmpty {
            Issue.record(Comment(rawValue: """
                \(missing.count) citation(s) of rule ids that Docs/Rules.md does not define (define the id there, \
                reword the text, or — for a token that is not a rule id — add it to RuleIDs.notRules with a reason):
                \(missing.joined(separator: "\n"))
                """))
        }
    }

    @Test("Docs/Rules.md: every anchor heads its own entry, no id is defined twice, links land on anchors")
    func rulesDocumentIsWellFormed() throws {
        let text = try RuleIDs.rulesText()
        let (ids, problems) = RuleIDs.defined(inRulesText: text)
        #expect(!ids.isEmpty)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        // Links between entries (`[S4](#S4)`) must land on an anchor.
        let link = try NSRegularExpression(pattern: #"\]\(#([^)]+)\)"#)
        let targets = link.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
        let broken = Set(targets.filter { !RuleIDs.citations(in: $0).isEmpty && !ids.contains($0) })
        #expect(broken.isEmpty, "links to undefined ids: \(broken.sorted())")
    }

    @Test("The id pattern finds rule ids and ignores type names, hex, data models and words")
    func patternSelfTest() {
        #expect(RuleIDs.citations(in: "W3 (wake-ups), R4a, L-c and T10; S4/F4; AP3.") ==
                ["W3", "R4a", "L-c", "T10", "S4", "F4", "AP3"])
        #expect(RuleIDs.citations(in: "UInt64 Int16 0xA3A3 A1A1A1A1 x86_64 LP64 UTF-8 CF-1153 L-shaped arm64").isEmpty)
        // An undefined id is reported against a definition list.
        let (ids, problems) = RuleIDs.defined(inRulesText: "<a id=\"R1\"></a>\n### R1 — title\n<a id=\"R1\"></a>\n## R2\n")
        #expect(ids == ["R1", "R1"])
        #expect(problems.count == 2)
        #expect(!Set(ids).contains(RuleIDs.citations(in: "see Q9")[0]))
    }

    @Test("The prose lexer reads comments and spaced string literals, not code or labels")
    func lexerSelfTest() {
        let source = """
            let a = "S9" // T9 here
            @Test("R9 runs") func f() { g("O9") } /* X9
            still X8 */ let h = 1
            let s = \"""
                M9 inside
                \"""
            let c = "\\"quoted\\" P9 value"
            """
        let prose = SourceProse(isC: false).prose(of: source)
        #expect(prose.map { RuleIDs.citations(in: $0) } == [["T9"], ["R9", "X9"], ["X8"], [], ["M9"], [], ["P9"]])
        let c = SourceProse(isC: true).prose(of: "char q = '\"'; // D9\nint x = 3; /* E9 */")
        #expect(c.map { RuleIDs.citations(in: $0) } == [["D9"], ["E9"]])
    }
}

/// Issue 27, item 4: a comment in the library that cites a rule id also says, in plain words,
/// what the rule states, so it reads without Docs/Rules.md open ("L-g: CF keeps a stale wake-up
/// and runs one more pass", not "L-g"). The check is a floor, not a judge: a comment (a block of
/// `//` lines, or a trailing comment) that cites an id must have at least three words of its own.
@Suite("RepositoryChecks: rule ids in comments")
struct RuleIDCommentTests {
    static let minimumWords = 3

    /// The comments of `source`: each block of consecutive comment lines, and each trailing
    /// comment, with the line it starts on.
    static func comments(of source: String) -> [(line: Int, text: String)] {
        var result: [(line: Int, text: String)] = []
        var block: [String] = []
        var blockStart = 0
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("//") {
                if block.isEmpty { blockStart = index + 1 }
                block.append(String(trimmed.drop { $0 == "/" }))
                continue
            }
            if !block.isEmpty {
                result.append((blockStart, block.joined(separator: " ")))
                block = []
            }
            // A trailing comment: after code, outside a string literal (no quote after it).
            if let range = line.range(of: " // "), !line[range.upperBound...].contains("\"") {
                result.append((index + 1, String(line[range.upperBound...])))
            }
        }
        if !block.isEmpty { result.append((blockStart, block.joined(separator: " "))) }
        return result
    }

    /// Words of two or more letters in `text` that are not rule ids.
    static func ownWords(_ text: String) -> Int {
        let ids = Set(RuleIDs.citations(in: text))
        return text.split { !$0.isLetter && $0 != "'" && $0 != "-" }
            .filter { $0.count > 1 && !ids.contains(String($0)) }.count
    }

    @Test("Every comment in Sources that cites a rule id says in plain words what it states")
    func citingCommentsExplain() throws {
        var terse: [String] = []
        for path in RepositoryText.files() where path.hasPrefix("Sources/") && path.hasSuffix(".swift") {
            let source = try String(contentsOf: RepositoryText.root.appendingPathComponent(path), encoding: .utf8)
            for comment in Self.comments(of: source) where !RuleIDs.citations(in: comment.text).isEmpty {
                if Self.ownWords(comment.text) < Self.minimumWords {
                    terse.append("\(path):\(comment.line): \(comment.text.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(terse.isEmpty, """
            \(terse.count) comment(s) cite a rule id without saying what it states (add a few words: \
            "W4: isWaiting from here", not "W4"):
            \(terse.joined(separator: "\n"))
            """)
    }

    @Test("The comment check counts a bare id as terse and a short explanation as enough")
    func checkSelfTest() {
        let source = """
            let a = 1 // W4
            let b = 2 // W4: isWaiting from here
            // L-g
            // and nothing more
            let s = "x // L3"
            """
        let found = Self.comments(of: source).filter { !RuleIDs.citations(in: $0.text).isEmpty }
        #expect(found.map { Self.ownWords($0.text) >= Self.minimumWords } == [false, true, true])
    }
}
