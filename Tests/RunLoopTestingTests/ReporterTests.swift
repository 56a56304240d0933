import RunLoopTesting
import Testing
import XCTest

/// The default reporter inside Swift Testing: a failure of the toolkit is a recorded issue at the
/// line that asked for the check.
@Suite struct SwiftTestingReporter {
    @Test func aFailureBecomesAnIssueAtTheCallersLine() {
        withKnownIssue {
            LoopTestHarness.run { harness in
                let matched = harness.expectSteps("entry")
                #expect(!matched)
            }
        } matching: { issue in
            // The headline is the issue's first line (its error); the details are its comment.
            issue.error.map(String.init(describing:))
                == "Loop steps differ from the expected order (1 expected, 0 happened): 0 out of place, 1 missing, 0 unexpected."
                && issue.comments.map(\.rawValue) == ["""
                      - entry — expected here; it did not happen
                    Actual steps: (none)
                    """] && issue.sourceLocation?.fileName == "ReporterTests.swift"
        }
    }
}

/// The default reporter under XCTest (`swift test` runs XCTest cases too): outside a Swift Testing
/// test a failure goes through `XCTFail` to the running `XCTestCase`. The case captures its own
/// failures to prove that.
final class XCTestReporterTests: XCTestCase {
    private var recorded: [(description: String, line: Int)] = []

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int,
                                expected: Bool) {
        recorded.append((description, lineNumber))
    }

    func testAFailureReachesTheRunningTestCase() {
        let line = #line + 2
        LoopTestHarness.run { harness in
            harness.advance(by: .seconds(-1))
        }
        XCTAssertEqual(recorded.map(\.description), ["failed - advance(by: -1.0 seconds): a clock cannot go back; nothing ran"])
        XCTAssertEqual(recorded.map(\.line), [line])
        recorded.removeAll()
    }

    func testACleanRunRecordsNothing() {
        LoopTestHarness.run { harness in
            let source = harness.addSource("s") { harness.log("performed") }
            harness.signal(source)
            XCTAssertEqual(harness.runUntilIdle(), 1)
            harness.expectSteps("source(s) · log(performed)", selection: LoopStepSelection(kinds: [.callouts, .logs]))
        }
        XCTAssertTrue(recorded.isEmpty)
    }
}
