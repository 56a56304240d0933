/// Where the toolkit's failures go. The harness keeps every failure in
/// ``LoopTestHarness/failures`` and also hands each one to its reporter.
///
/// The default, ``AutomaticLoopTestReporter``, records a Swift Testing issue inside a Swift
/// Testing test and calls `XCTFail` otherwise. ``CollectingLoopTestReporter`` only keeps them,
/// for code that checks the toolkit itself or runs outside a test framework.
///
/// ```swift
/// struct Printing: LoopTestReporter {
///     func record(_ failure: LoopTestFailure) { print(failure) }
/// }
/// ```
public protocol LoopTestReporter: Sendable {
    /// Records one failure; called on the thread that ran the failed check.
    func record(_ failure: LoopTestFailure)
}
