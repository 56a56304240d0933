import RunLoopKit

extension LoopTestHarness {
    /// The steps recorded so far that `selection` shows, each with its pass and rule.
    ///
    /// ```swift
    /// for placement in harness.steps() { print(placement) }
    /// ```
    public func steps(_ selection: LoopStepSelection = .all) -> [LoopStepPlacement] {
        LoopStepPlacement.placements(in: recorder.entries, selection: selection)
    }

    /// The recorded steps in the compact text form, ready to paste into an expectation.
    public func stepsText(_ selection: LoopStepSelection = .all) -> String {
        steps(selection).map(\.step.description).joined(separator: " · ")
    }

    /// Checks that the recorded steps (as `selection` shows them) are exactly `expected`, given
    /// in the compact text form (see ``LoopStep``); otherwise reports the diff, naming for each
    /// step out of place its pass and the rule that put it there. Returns whether they matched.
    ///
    /// ```swift
    /// harness.expectSteps("entry · beforeTimers · beforeSources · source(s) · beforeTimers"
    ///     + " · beforeSources · beforeWaiting · afterWaiting · exit")
    /// ```
    @discardableResult
    public func expectSteps(_ expected: String, selection: LoopStepSelection = .all, fileID: String = #fileID,
                            filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column) -> Bool {
        let location = LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        do {
            return check(try LoopStep.parse(expected), selection: selection, at: location)
        } catch {
            report("The expected steps cannot be read: \(error)", at: location)
            return false
        }
    }

    /// The same with the expected steps built from statements.
    ///
    /// ```swift
    /// harness.expectSteps(selection: LoopStepSelection(kinds: [.callouts, .commits])) {
    ///     LoopStep.source("s")
    ///     LoopStep.layout("root")
    ///     LoopStep.commit
    /// }
    /// ```
    @discardableResult
    public func expectSteps(selection: LoopStepSelection = .all, fileID: String = #fileID,
                            filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
                            @LoopStepsBuilder _ expected: () -> [LoopStep]) -> Bool {
        check(expected(), selection: selection,
              at: LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// Forgets the steps recorded so far, so the next expectation looks at what follows.
    public func clearTrace() { recorder.clear() }

    private func check(_ expected: [LoopStep], selection: LoopStepSelection, at location: LoopTestSourceLocation) -> Bool {
        guard let text = LoopOrdering.mismatch(expected: expected, actual: steps(selection)) else { return true }
        report(text, at: location)
        return false
    }
}
