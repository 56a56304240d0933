import Foundation

/// One line of human-written text in the repository: a Markdown line, or the comments and
/// prose string literals of one source line.
struct ProseLine: Sendable {
    /// Path relative to the repository root, e.g. `Sources/RunLoopCore/Loop+Run.swift`.
    let path: String
    /// 1-based line number in that file.
    let line: Int
    /// The text to check; segments of one source line are joined with " ¦ ".
    let text: String

    var location: String { "\(path):\(line)" }
}

/// Finds the repository's files and the prose in them.
enum RepositoryText {
    /// The repository root: three levels above this file (`Tests/RepositoryChecksTests/…`).
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What the checks read: the library, its tests, its documentation and the benchmarks.
    /// This target's own directory is left out because its sources spell out the very
    /// patterns they look for.
    static let scannedRoots = ["Sources", "Tests", "Docs", "Benchmarks/Benchmarks", "Benchmarks/Support"]
    static let scannedFiles = ["README.md", "Package.swift", "Benchmarks/Package.swift"]
    static let excludedDirectories = ["Tests/RepositoryChecksTests"]
    static let extensions: Set<String> = ["swift", "md", "c", "h"]

    /// Relative paths of every scanned file, sorted.
    static func files() -> [String] {
        var result: [String] = []
        let manager = FileManager.default
        for top in scannedRoots {
            let base = root.appendingPathComponent(top)
            guard let walker = manager.enumerator(atPath: base.path) else { continue }
            while let relative = walker.nextObject() as? String {
                let path = top + "/" + relative
                if excludedDirectories.contains(where: { path.hasPrefix($0 + "/") }) { continue }
                let ext = (relative as NSString).pathExtension
                if extensions.contains(ext) { result.append(path) }
            }
        }
        for file in scannedFiles where manager.fileExists(atPath: root.appendingPathComponent(file).path) {
            result.append(file)
        }
        return result.sorted()
    }

    /// The prose lines of every scanned file. Markdown: every line. Swift and C: comments, and
    /// string literals that contain a space (test names, messages) — not identifiers, trace
    /// labels or other code.
    static func proseLines() throws -> [ProseLine] {
        var result: [ProseLine] = []
        for path in files() {
            let url = root.appendingPathComponent(path)
            let contents = try String(contentsOf: url, encoding: .utf8)
            if path.hasSuffix(".md") {
                for (index, line) in contents.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    result.append(ProseLine(path: path, line: index + 1, text: String(line)))
                }
            } else {
                let lexer = SourceProse(isC: path.hasSuffix(".c") || path.hasSuffix(".h"))
                for (index, text) in lexer.prose(of: contents).enumerated() where !text.isEmpty {
                    result.append(ProseLine(path: path, line: index + 1, text: text))
                }
            }
        }
        return result
    }
}

/// A small lexer for Swift and C: per line, the text of comments and of string literals that
/// contain a space. It knows line and (nested) block comments, single-line and multi-line
/// string literals with escapes, and C character literals; that is all the checks need.
struct SourceProse {
    let isC: Bool

    private enum State {
        case code
        case blockComment(depth: Int)
        case string
        case multilineString
    }

    /// One entry per line of `source`: that line's prose segments joined with " ¦ ".
    func prose(of source: String) -> [String] {
        lines(of: source).map(\.prose)
    }

    /// One entry per line of `source`: that line's code, each comment left out and each string
    /// literal a single space, so a message or a doc comment that names a call is not one.
    func code(of source: String) -> [String] {
        lines(of: source).map(\.code)
    }

    private func lines(of source: String) -> [(prose: String, code: String)] {
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false).map { Array($0.unicodeScalars) }
        var state = State.code
        var result: [(prose: String, code: String)] = []
        result.reserveCapacity(lines.count)
        for scalars in lines {
            var segments: [String] = []
            var current = String.UnicodeScalarView()
            var code = String.UnicodeScalarView()
            var index = 0
            func peek(_ offset: Int) -> Unicode.Scalar? {
                index + offset < scalars.count ? scalars[index + offset] : nil
            }
            func closeLiteral() {
                let text = String(current)
                if text.contains(" ") { segments.append(text) }
                current = String.UnicodeScalarView()
            }
            func closeComment() {
                if !current.isEmpty { segments.append(String(current)) }
                current = String.UnicodeScalarView()
            }
            while index < scalars.count {
                let c = scalars[index]
                switch state {
                case .code:
                    if c == "/" && peek(1) == "/" {
                        let rest = String(String.UnicodeScalarView(scalars[(index + 2)...]))
                        if !rest.isEmpty { segments.append(rest) }
                        index = scalars.count
                        continue
                    } else if c == "/" && peek(1) == "*" {
                        state = .blockComment(depth: 1)
                        index += 2
                        continue
                    } else if c == "\"" && peek(1) == "\"" && peek(2) == "\"" {
                        state = .multilineString
                        index += 3
                        continue
                    } else if c == "\"" {
                        state = .string
                        code.append(" ")
                    } else if c == "'" && isC {
                        // A C character literal: skip it whole ('"' must not open a string).
                        index += 1
                        while index < scalars.count && scalars[index] != "'" {
                            index += scalars[index] == "\\" ? 2 : 1
                        }
                    } else {
                        code.append(c)
                    }
                case .blockComment(let depth):
                    if c == "*" && peek(1) == "/" {
                        index += 2
                        if depth == 1 {
                            state = .code
                            closeComment()
                        } else {
                            state = .blockComment(depth: depth - 1)
                        }
                        continue
                    } else if c == "/" && peek(1) == "*" && !isC {
                        state = .blockComment(depth: depth + 1)
                        index += 2
                        continue
                    }
                    current.append(c)
                case .string:
                    if c == "\\" {
                        if let next = peek(1) { current.append(c); current.append(next) }
                        index += 2
                        continue
                    } else if c == "\"" {
                        state = .code
                        closeLiteral()
                    } else {
                        current.append(c)
                    }
                case .multilineString:
                    if c == "\\" {
                        if let next = peek(1) { current.append(c); current.append(next) }
                        index += 2
                        continue
                    } else if c == "\"" && peek(1) == "\"" && peek(2) == "\"" {
                        state = .code
                        closeLiteral()
                        index += 3
                        continue
                    }
                    current.append(c)
                }
                index += 1
            }
            // End of line: comments and multi-line literals continue on the next line, but
            // their text so far belongs to this one. An unterminated single-line literal ends.
            switch state {
            case .blockComment:
                closeComment()
            case .multilineString:
                closeLiteral()
            case .string:
                closeLiteral()
                state = .code
            case .code:
                break
            }
            result.append((segments.joined(separator: " ¦ "), String(code)))
        }
        return result
    }
}
