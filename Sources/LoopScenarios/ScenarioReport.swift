import RunLoopKit

/// The text the main job and the tests print for a result.
///
/// ```swift
/// print(ScenarioReport.line(result))        // "✓ seed-code1-source0"
/// ```
package enum ScenarioReport {
    /// `✓ name` or `✗ name`.
    package static func line(_ result: ScenarioResult) -> String {
        (result.passed ? "✓ " : "✗ ") + result.name
    }

    /// What went wrong: the trace diff (when the traces differ) and the failed checks, indented.
    package static func failureDetails(_ result: ScenarioResult) -> [String] {
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
    package static func checkLines(_ result: ScenarioResult) -> [String] {
        result.checks.map { check in
            "  \(check.passed ? "✓" : "✗") \(check.name)" + (check.detail.isEmpty ? "" : " — \(check.detail)")
        }
    }

    /// The full report for one scenario: trace comparison, checks and the verdict.
    package static func fullText(_ result: ScenarioResult) -> String {
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
