import RunLoopTesting
import Testing
import XCTest

/// The default reporter inside Swift Testing: a failure of the toolkit is a recorded issue at the
/// line that asked for the check. (A one-line failure: the runner prints a known issue's text,
/// and the multi-line ordering report is checked in `OrderingDiffTests`.)
@Suite struct SwiftTestingReporter {
    @Test func aFailureBecomesAnIssueAtTheCallersLine() {
        let line = #line + 3
        withKnownIssue {
            LoopTestHarness.run { harness in
                _ = harness.advance(by: .seconds(-1))
            }
        } matching: { issue in
            issue.comments.map(\.rawValue) == ["advance(by: -1.0 seconds): a clock cannot go back; nothing ran"]
                && issue.sourceLocation?.fileName == "ReporterTests.swift" && issue.sourceLocation?.line == line
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
