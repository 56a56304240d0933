import RunLoopKit

/// The ordering assertions on any trace: a live recorder's entries or a trace read back.
/// ``LoopTestHarness`` offers the same as `expectSteps` on its own trace.
///
/// ```swift
/// LoopOrdering.expect("entry · source(s) · beforeWaiting", in: recorder.entries,
///                     selection: LoopStepSelection(kinds: [.activities, .callouts]))
/// ```
public enum LoopOrdering {
    /// The failure text for `actual` against `expected` (see the diff format in `Docs/Testing.md`),
    /// or nil when they are the same.
    ///
    /// ```swift
    /// let text = LoopOrdering.mismatch(expected: [.entry, .exit],
    ///                                  actual: LoopStepPlacement.placements(in: recorder.entries))
    /// ```
    public static func mismatch(expected: [LoopStep], actual: [LoopStepPlacement]) -> String? {
        LoopStepDiff.text(expected: expected, actual: actual)
    }

    /// Checks that the steps of `entries` chosen by `selection` are exactly `expected`;
    /// otherwise reports the diff through `reporter`. Returns whether they matched.
    @discardableResult
    public static func expect(_ expected: [LoopStep], in entries: [TraceEntry], selection: LoopStepSelection = .all,
                              reporter: any LoopTestReporter = AutomaticLoopTestReporter(),
                              fileID: String = #fileID, filePath: StaticString = #filePath,
                              line: UInt = #line, column: UInt = #column) -> Bool {
        let location = LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        guard let text = mismatch(expected: expected, actual: LoopStepPlacement.placements(in: entries, selection: selection)) else {
            return true
        }
        reporter.record(LoopTestFailure(text, at: location))
        return false
    }

    /// The same with the expected steps in their compact text form (see ``LoopStep/parse(_:)``);
    /// text that cannot be read is reported as a failure naming the step.
    @discardableResult
    public static func expect(_ expected: String, in entries: [TraceEntry], selection: LoopStepSelection = .all,
                              reporter: any LoopTestReporter = AutomaticLoopTestReporter(),
                              fileID: String = #fileID, filePath: StaticString = #filePath,
                              line: UInt = #line, column: UInt = #column) -> Bool {
        do {
            return expect(try LoopStep.parse(expected), in: entries, selection: selection, reporter: reporter,
                          fileID: fileID, filePath: filePath, line: line, column: column)
        } catch {
            let location = LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
            reporter.record(LoopTestFailure("The expected steps cannot be read: \(error)", at: location))
            return false
        }
    }
}
