import PThreads
import RunLoopKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` on a loop of its own, on a ``VirtualClock``, so that the async code under test
/// runs one job at a time in an order fixed by the code alone.
///
/// The loop runs on a thread of its own for the test. The body is isolated to a
/// ``VirtualLoopTest`` (an actor whose executor is the loop), and its task prefers the loop as
/// its task executor: the body, the tasks it starts that inherit its isolation, child tasks,
/// nonisolated async functions it calls, and actors whose executor is `test.loop` all run on
/// the loop's thread. So does every job the test's thread sends to the global concurrent
/// executor (`Task.detached`, a `Task {…}` made in a loop callout or not capturing the test):
/// a runtime hook queues it on the loop instead, on that thread only. Only the test's thread
/// runs the loop, outside every job, so at most one job runs at a time; time moves only in
/// ``VirtualLoopTest/advance(by:fileID:filePath:line:column:)``, which resumes due sleepers one
/// at a time in deadline order and lets the loop settle after each.
///
/// A hop to the main actor is waited for: the loop's thread blocks until the main queue has run
/// it. An input from another thread that the loop did not wait for (Dispatch work, a task that
/// ran elsewhere) is reported with the thread and the first frame of the program on its stack. A
/// sleep on a real clock (`Task.sleep(for:)`, `SuspendingClock`), which virtual time cannot end,
/// is reported when it begins on the loop's thread, and ends at once, as if its time had
/// passed: its task goes on behind the jobs already queued on the loop, and nothing waits for
/// real time.
///
/// At the end, tasks still asleep on the clock and items still on the loop are reported (the
/// sleepers are resumed with `CancellationError`). Failures go to `reporter` at the end of the
/// test, each at the line that asked for the check (this call for the end-of-test checks): in
/// Swift Testing, an issue whose first line says what happened.
///
/// ```swift
/// @Test func theSleepersWakeInDeadlineOrder() async throws {
///     try await withVirtualLoop { test in
///         var order: [String] = []
///         for seconds in [3, 1, 2] {
///             Task { try await test.clock.sleep(for: .seconds(seconds)); order.append("\(seconds)s") }
///         }
///         await test.advance(by: .seconds(5))
///         #expect(order == ["1s", "2s", "3s"])
///     }
/// }
/// ```
///
/// - Parameters:
///   - start: the clock's first reading.
///   - maxPassesPerSettle: how many passes of the loop one settling may take before it is
///     reported as not settling (a task that never waits for long).
///   - offLoopTimeout: how long, in real time, the loop waits for work off it: the main queue
///     running a main-actor hop, or an input from another thread when the body waits for one.
///   - reporter: where failures go (default: the running test framework).
///   - fileID: where the end-of-test failures point.
///   - filePath: the same, as XCTest wants it.
///   - line: the same, the line.
///   - column: the same, the column.
///   - body: the test, isolated to its ``VirtualLoopTest``.
/// - Returns: what `body` returned.
/// - Throws: what `body` threw, or ``VirtualLoopTestError`` when the body never finished.
public func withVirtualLoop<Result: Sendable>(
    start: LoopInstant = .zero, maxPassesPerSettle: Int = 10_000, offLoopTimeout: Duration = .seconds(5),
    reporter: any LoopTestReporter = AutomaticLoopTestReporter(),
    fileID: String = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
    _ body: @escaping @Sendable (isolated VirtualLoopTest) async throws -> Result
) async throws -> Result {
    _ = RuntimeHooks.installed
    let location = LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    let thread = VirtualLoopThread()
    let test = await thread.start(start: start, maxPassesPerSettle: maxPassesPerSettle,
                                  offLoopTimeout: offLoopTimeout, createdAt: location)
    // Made here, not on the loop's thread, so that it inherits the test's task-local values
    // (Swift Testing's current test among them); its first job reaches the loop from here.
    let bodyTask = Task(executorPreference: test.loop) { [test] in
        defer { test.driver.bodyFinished() }
        return try await body(test)
    }
    let finished = await withTaskCancellationHandler {
        await thread.drive(cancelBody: { bodyTask.cancel() })
    } onCancel: {
        bodyTask.cancel()
    }
    for failure in test.driver.failures { reporter.record(failure) }
    guard finished else { throw VirtualLoopTestError.bodyDidNotFinish(location) }
    return try await bodyTask.value
}

/// Why ``withVirtualLoop(start:maxPassesPerSettle:offLoopTimeout:reporter:fileID:filePath:line:column:_:)``
/// threw instead of returning the body's result.
public enum VirtualLoopTestError: Error, CustomStringConvertible {
    /// The body waited for something that never came, even after its task was cancelled
    /// (reported with what it waited for).
    case bodyDidNotFinish(LoopTestSourceLocation)

    public var description: String {
        switch self {
        case .bodyDidNotFinish(let location):
            "the body of withVirtualLoop at \(location) did not finish: it waits for work off the loop that never came"
        }
    }
}

/// The thread of one virtual-loop test: it makes the loop (so the loop belongs to it), hands the
/// test to the caller, and drives the loop once the body's task is queued.
final class VirtualLoopThread: Sendable {
    // What crosses between the test's thread and the awaiting task goes through `handoff`'s
    // lock; the continuations only say "look now". (A value passed through a continuation is
    // ordered by the concurrency runtime, which ThreadSanitizer does not see through here.)
    private struct Handoff {
        var started: CheckedContinuation<Void, Never>?
        var test: VirtualLoopTest?
        var cancelBody: (@Sendable () -> Void)?
        var go = false
        var finished: CheckedContinuation<Void, Never>?
        var bodyFinished = false
    }

    private let handoff = Locked(Handoff())
    private let changed = PThreadCondition()

    /// Starts the thread; returns its test once the loop exists.
    func start(start: LoopInstant, maxPassesPerSettle: Int, offLoopTimeout: Duration,
               createdAt: LoopTestSourceLocation) async -> VirtualLoopTest {
        await withCheckedContinuation { continuation in
            handoff.withLock { $0.started = continuation }
            let handle = startPThread(name: "VirtualLoopTest") { [self] in
                let clock = VirtualClock(start: start)
                let driver = VirtualLoopDriver(loop: Loop(clock: clock), clock: clock, maxPassesPerSettle: maxPassesPerSettle,
                                               offLoopTimeout: offLoopTimeout, createdAt: createdAt)
                handoff.withLock { handoff in
                    handoff.test = VirtualLoopTest(driver: driver)
                    return handoff.started.take()
                }?.resume()
                let cancelBody = handoff.wait(on: changed, untilMonotonicNanoseconds: .max) { $0.go }
                    ? handoff.withLock { $0.cancelBody } : nil
                if let cancelBody { driver.setCancelBody(cancelBody) }
                MonitorSlot.set(driver.monitor)
                let bodyFinished = driver.drive()
                driver.finish()
                MonitorSlot.set(nil)
                handoff.withLock { handoff in
                    handoff.bodyFinished = bodyFinished
                    return handoff.finished.take()
                }?.resume()
            }
            let status = pthread_detach(handle)
            precondition(status == 0, "RunLoopTesting: pthread_detach failed: \(status)")
        }
        return handoff.withLock { $0.test! }
    }

    /// Lets the thread drive the loop (the body's task is queued); returns when the test has
    /// ended: whether the body finished.
    func drive(cancelBody: @escaping @Sendable () -> Void) async -> Bool {
        await withCheckedContinuation { continuation in
            handoff.withLock {
                $0.finished = continuation
                $0.cancelBody = cancelBody
                $0.go = true
            }
            changed.broadcast()
        }
        return handoff.withLock { $0.bodyFinished }
    }
}
