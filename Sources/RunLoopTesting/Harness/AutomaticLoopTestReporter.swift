// A test-support library may link the test frameworks: on Linux both libTesting and libXCTest
// ship with the toolchain (each brings Foundation along, which is why only this module imports
// them and `import RunLoopKit` stays free of Foundation).
#if canImport(Testing)
import Testing
#endif
#if canImport(XCTest)
import XCTest
#endif

/// Reports through the test framework that is running the check: inside a Swift Testing test
/// (`Test.current` is set) as a recorded `Issue`, otherwise through `XCTFail`, which fails the
/// running `XCTestCase`.
///
/// In Swift Testing the issue's first line is the failure's headline (what happened, as
/// "Caught error: …": the headline is recorded as the issue's error) and its comment the
/// details, so a report does not open with the generic "Issue recorded".
///
/// Outside any test `XCTFail` records nothing; the harness still keeps every failure in
/// ``LoopTestHarness/failures`` and ``LoopTestHarness/finish(fileID:filePath:line:column:)``
/// returns the ones it found, so nothing is lost.
///
/// ```swift
/// let harness = LoopTestHarness(reporter: AutomaticLoopTestReporter())   // the default
/// ```
public struct AutomaticLoopTestReporter: LoopTestReporter {
    public init() {}

    public func record(_ failure: LoopTestFailure) {
        #if canImport(Testing)
        if Test.current != nil {
            let location = failure.location
            let details = failure.details
            Issue.record(FailureHeadline(description: failure.headline),
                         details.isEmpty ? nil : Comment(rawValue: details),
                         sourceLocation: SourceLocation(fileID: location.fileID, filePath: "\(location.filePath)",
                                                        line: Int(location.line), column: Int(location.column)))
            return
        }
        #endif
        #if canImport(XCTest)
        XCTFail(failure.message, file: failure.location.filePath, line: failure.location.line)
        #endif
    }
}

/// A failure's headline as the error of a Swift Testing issue: the report prints its
/// description on the issue's first line.
struct FailureHeadline: Error, CustomStringConvertible {
    let description: String
}
