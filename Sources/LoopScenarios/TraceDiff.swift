/// A line-by-line diff of an expected and a produced trace (longest common subsequence), in the
/// familiar form: `  line` for equal lines, `- line` for an expected line that is missing,
/// `+ line` for a produced line that was not expected.
///
/// ```swift
/// TraceDiff.lines(expected: ["a", "b", "c"], produced: ["a", "c", "b"])
/// // ["  a", "- b", "  c", "+ b"]
/// ```
public enum TraceDiff {
    public static func lines(expected: [String], produced: [String]) -> [String] {
        let n = expected.count, m = produced.count
        // common[i][j]: length of the LCS of expected[i...] and produced[j...]. Traces are
        // short (tens of lines), so the quadratic table is fine.
        var common = Array(repeating: Array(repeating: 0, count: m + 1), count: n + 1)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                common[i][j] = expected[i] == produced[j]
                    ? common[i + 1][j + 1] + 1
                    : max(common[i + 1][j], common[i][j + 1])
            }
        }
        var out: [String] = []
        var i = 0, j = 0
        while i < n || j < m {
            if i < n, j < m, expected[i] == produced[j] {
                out.append("  " + expected[i])
                i += 1
                j += 1
            } else if j < m, i == n || common[i][j + 1] > common[i + 1][j] {
                out.append("+ " + produced[j])
                j += 1
            } else {
                out.append("- " + expected[i])
                i += 1
            }
        }
        return out
    }
}

/// The text the main job and the tests print for a result.
///
/// ```swift
/// print(ScenarioReport.line(result))        // "✓ seed-code1-source0"
/// ```
public enum ScenarioReport {
    /// `✓ name` or `✗ name`.
    public static func line(_ result: ScenarioResult) -> String {
        (result.passed ? "✓ " : "✗ ") + result.name
    }

    /// What went wrong: the trace diff (when the traces differ) and the failed checks, indented.
    public static func failureDetails(_ result: ScenarioResult) -> [String] {
        var out: [String] = []
        if !result.traceMatches {
            out.append("    expected (-) vs produced (+):")
            out += TraceDiff.lines(expected: result.expected, produced: result.produced).map { "      " + $0 }
        }
        for check in result.failedChecks {
            out.append("    failed check: \(check.name)" + (check.detail.isEmpty ? "" : " — \(check.detail)"))
        }
        return out
    }

    /// Every check with its mark and detail.
    public static func checkLines(_ result: ScenarioResult) -> [String] {
        result.checks.map { check in
            "  \(check.passed ? "✓" : "✗") \(check.name)" + (check.detail.isEmpty ? "" : " — \(check.detail)")
        }
    }

    /// The full report for one scenario: trace comparison, checks and the verdict.
    public static func fullText(_ result: ScenarioResult) -> String {
        var out: [String] = []
        out.append("== \(result.name): verbose trace")
        out.append(result.fullTrace.hasSuffix("\n") ? String(result.fullTrace.dropLast()) : result.fullTrace)
        out.append("== compared trace (expected | produced)")
        out += TraceDiff.lines(expected: result.expected, produced: result.produced).map { "  " + $0 }
        out.append("== checks")
        out += checkLines(result)
        out.append("== result")
        out.append(line(result))
        out += failureDetails(result)
        return out.joined(separator: "\n")
    }
}
