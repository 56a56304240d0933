import RunLoopKit

/// The loop and the virtual clock of one async test, given to the body of
/// ``withVirtualLoop(start:maxPassesPerSettle:offLoopTimeout:reporter:fileID:filePath:line:column:_:)``.
///
/// It is an actor whose executor is the test's loop, and the body is isolated to it: the body,
/// every task it starts that inherits that isolation (a `Task {…}` whose closure captures the
/// test, task groups, `async let`), every actor whose executor is ``loop``, and the loop's own
/// timers and sources all run on the loop's one thread, one job at a time.
///
/// Time moves only when the body calls ``advance(by:fileID:filePath:line:column:)`` or
/// ``advance(to:fileID:filePath:line:column:)``; ``runUntilIdle(maxPasses:fileID:filePath:line:column:)``
/// lets everything that can run now run until it waits.
///
/// ```swift
/// try await withVirtualLoop { test in
///     let waiter = Task { try await test.clock.sleep(for: .seconds(1)) }   // captures test: on the loop
///     await test.advance(by: .seconds(1))
///     try await waiter.value
/// }
/// ```
public actor VirtualLoopTest {
    /// The test's loop: a detached loop on ``clock``, run by the test's own thread.
    public nonisolated let loop: Loop
    /// The virtual clock: sleeps on it resume only when an advance reaches them.
    public nonisolated let clock: VirtualClock
    nonisolated let driver: VirtualLoopDriver
    /// The mode the driver runs while the body waits for work from another thread (for this
    /// package's tests, which act while the loop sleeps in it).
    package static var offLoopWaitMode: Loop.Mode { VirtualLoopDriver.offLoopWaitMode }

    /// The loop: the body and this actor's methods run on its thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    init(driver: VirtualLoopDriver) {
        self.driver = driver
        loop = driver.loop
        clock = driver.clock
    }

    /// Lets `duration` of virtual time pass, one event at a time: at each instant the loop's
    /// due timers fire (in one pass, as CF fires every overdue timer), then each task whose
    /// sleep is due resumes, in deadline order (equal deadlines: in the order the sleeps began),
    /// and everything on the loop runs until it waits before the next one resumes. A sleep
    /// begun meanwhile with a deadline inside the window is one more event. Returns when the
    /// clock reads now + `duration` and the loop has settled. A negative duration is reported
    /// and nothing runs.
    ///
    /// ```swift
    /// await test.advance(by: .milliseconds(300))
    /// ```
    public func advance(by duration: Duration, fileID: String = #fileID, filePath: StaticString = #filePath,
                        line: UInt = #line, column: UInt = #column) async {
        let location = LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        guard duration >= .zero else {
            driver.report("advance(by: \(duration)): a clock cannot go back; nothing ran", at: location)
            return
        }
        let target = Nanoseconds.add(clock.now.nanoseconds, Nanoseconds.from(duration))
        await advance(toNanoseconds: target, caller: "advance(by: \(duration))", at: location)
    }

    /// ``advance(by:fileID:filePath:line:column:)`` up to `instant`; an instant before now is
    /// reported and nothing runs.
    ///
    /// ```swift
    /// await test.advance(to: test.clock.now.advanced(by: .seconds(2)))
    /// ```
    public func advance(to instant: LoopInstant, fileID: String = #fileID, filePath: StaticString = #filePath,
                        line: UInt = #line, column: UInt = #column) async {
        let location = LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        await advance(toNanoseconds: instant.nanoseconds, caller: "advance(to: \(instant))", at: location)
    }

    private func advance(toNanoseconds target: UInt64, caller: String, at location: LoopTestSourceLocation) async {
        await withCheckedContinuation { continuation in
            driver.request(.advance(to: target, caller: caller, location, continuation))
        }
    }

    /// Lets everything on the loop that can run now run until it waits (jobs, due timers,
    /// signalled sources, the main actor's work the test started), without moving the clock;
    /// Flutter's `pumpAndSettle` without time. Returns false, and reports what is still due,
    /// when `maxPasses` passes of the loop do not settle it.
    ///
    /// ```swift
    /// let worker = Task { await test.loop.isOwnerThread }   // queued on the loop, not yet run
    /// await test.runUntilIdle()                              // it has run now
    /// ```
    @discardableResult
    public func runUntilIdle(maxPasses: Int = 10_000, fileID: String = #fileID, filePath: StaticString = #filePath,
                             line: UInt = #line, column: UInt = #column) async -> Bool {
        let location = LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        return await withCheckedContinuation { continuation in
            driver.request(.runUntilIdle(maxPasses: max(1, maxPasses), location, continuation))
        }
    }

    /// The failures found so far (they are also handed to the reporter when the test ends).
    public nonisolated var failures: [LoopTestFailure] { driver.failures }
}
