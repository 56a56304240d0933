import Foundation
import Testing

/// Citations of line numbers in another project's file. Line numbers go stale with every
/// upstream edit and cannot be checked from here; a function name can (say "CF's
/// `__CFRunLoopDoBlocks`", not the line it starts on).
enum LineNumberCitations {
    static let patterns: [(name: String, regex: NSRegularExpression)] = [
        // "SCF 3036", "SCF: 2141-2152"
        ("swift-corelibs CF line", #"\bSCF\s*:?\s*[0-9]{2,}"#),
        // "CF1153:2649", "CF-1153 1709"
        ("CF-1153 line", #"\bCF-?1153\s*[: ]\s*[0-9]{2,}"#),
        // "DISP:6544", "RL:315", "objc4:1246"
        ("tagged source line", #"\b(?:DISP|RL|objc4)\s*:\s*[0-9]+"#),
        // "CFRunLoop.c:123", "NSObject.mm 800", "RunLoop.swift, line 12"
        ("file:line", #"\b[A-Za-z0-9_+-]+\.(?:c|h|mm|m|cc|cpp|swift|dart|java|py|js|ts|rs|go)(?::[0-9]+|\s+[0-9]{2,}\b|,?\s+lines?\s+[0-9]+)"#),
        // "line 123 of", "lines 40-52 in"
        ("line N of", #"\blines?\s+[0-9]+(?:\s*[-–]\s*[0-9]+)?\s+(?:of|in)\b"#),
        // "(3060)", "(3070-3127)", "(3070/3127)", ", 3275-3287)": a bare four-digit number or range in
        // parentheses (not a call such as `posix_memalign(4096)`)
        ("bare line number", #"(?<![A-Za-z0-9_)\]])\(\s*[0-9]{4}(?:\s*[-–/]\s*[0-9]{4})*\s*\)|,\s*[0-9]{4}\s*[-–/]\s*[0-9]{4}\s*\)"#),
    ].map { ($0.0, try! NSRegularExpression(pattern: $0.1)) }

    /// The names of the patterns that match `text`.
    static func matches(in text: String) -> [String] {
        let range = NSRange(text.startIndex..., in: text)
        return patterns.filter { $0.regex.firstMatch(in: text, range: range) != nil }.map(\.name)
    }
}

@Suite("RepositoryChecks: no line numbers of other projects")
struct LineNumberCitationTests {
    @Test("No comment or doc cites a line number of another project's file")
    func noLineNumberCitations() throws {
        var found: [String] = []
        for line in try RepositoryText.proseLines() {
            let kinds = LineNumberCitations.matches(in: line.text)
            if !kinds.isEmpty {
                found.append("\(line.location): [\(kinds.joined(separator: ", "))] \(line.text.trimmingCharacters(in: .whitespaces))")
            }
        }
        if !found.isEmpty {
            Issue.record(Comment(rawValue: """
                \(found.count) line(s) cite line numbers; name the function instead (e.g. "CF's __CFRunLoopRun"):
                \(found.joined(separator: "\n"))
                """))
        }
    }

    @Test("The patterns catch line citations and leave counts, sizes and calls alone")
    func patternSelfTest() {
        for bad in ["see SCF 2713", "CF1153:2649", "CF-1153 1709", "CFRunLoop.c:123", "NSObject.mm 800",
                    "RL.swift:315", "DISP 6544".replacingOccurrences(of: " ", with: ":"),
                    "line 123 of CFRunLoop", "W3 (3016)", "X4 (3219-3240)", "L1 (3070/3127)", "(L-e, 3275-3287)"] {
            #expect(!LineNumberCitations.matches(in: bad).isEmpty, "not caught: \(bad)")
        }
        for fine in ["CF-1153 ORs the flags", "posix_memalign(4096)", "page 1 (496 entries)", "(65536)",
                     "at line 9, block2 at line 11", "order 2000000 (2_000_000)", "Loop+Run.swift holds the pass",
                     "swift-tools-version:6.1", "read(fd, buffer, 4096)"] {
            #expect(LineNumberCitations.matches(in: fine).isEmpty, "false positive: \(fine)")
        }
    }
}
