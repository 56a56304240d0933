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
