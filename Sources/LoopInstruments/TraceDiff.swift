/// A diff of an expected and a produced trace (longest common subsequence): as an alignment of
/// positions, or line by line in the familiar form — `  line` for equal lines, `- line` for an
/// expected line that is missing, `+ line` for a produced line that was not expected.
///
/// ```swift
/// TraceDiff.lines(expected: ["a", "b", "c"], produced: ["a", "c", "b"])
/// // ["  a", "- b", "  c", "+ b"]
/// ```
public enum TraceDiff {
    /// One step of an alignment, with positions into the two sequences.
    public enum Step: Equatable, Sendable {
        /// `expected[expected]` and `produced[produced]` are equal and aligned.
        case same(expected: Int, produced: Int)
        /// `expected[index]` has no partner at this point of the produced sequence.
        case missing(expected: Int)
        /// `produced[index]` has no partner at this point of the expected sequence.
        case extra(produced: Int)
    }

    /// The alignment of `expected` and `produced`, in order; when an element could go either
    /// way the produced one comes first (`+` before `-`).
    ///
    /// ```swift
    /// TraceDiff.alignment(expected: [1, 2], produced: [2])
    /// // [.missing(expected: 0), .same(expected: 1, produced: 0)]
    /// ```
    public static func alignment<Element: Equatable>(expected: [Element], produced: [Element]) -> [Step] {
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
        var steps: [Step] = []
        var i = 0, j = 0
        while i < n || j < m {
            if i < n, j < m, expected[i] == produced[j] {
                steps.append(.same(expected: i, produced: j))
                i += 1
                j += 1
            } else if j < m, i == n || common[i][j + 1] > common[i + 1][j] {
                steps.append(.extra(produced: j))
                j += 1
            } else {
                steps.append(.missing(expected: i))
                i += 1
            }
        }
        return steps
    }

    /// The alignment as text lines: `  ` equal, `- ` missing, `+ ` not expected.
    public static func lines(expected: [String], produced: [String]) -> [String] {
        alignment(expected: expected, produced: produced).map { step in
            switch step {
            case .same(let i, _): "  " + expected[i]
            case .missing(let i): "- " + expected[i]
            case .extra(let j): "+ " + produced[j]
            }
        }
    }
}
