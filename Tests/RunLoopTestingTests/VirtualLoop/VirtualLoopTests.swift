import Dispatch
import RunLoopTesting
import Synchronization
import Testing

/// What `withVirtualLoop` guarantees and how it reports what it cannot: each case checks one
/// promise of Docs/Testing.md ("Async tests on a virtual loop").
@Suite struct VirtualLoopTests {
    @Test func theBodyAndItsTasksRunOnTheLoopsThread() async throws {
        let places = try await withVirtualLoop { test in
            let isolated = Task { _ = test; return test.loop.isOwnerThread }
            let unisolated = Task.detached { test.loop.isOwnerThread }
            async let child = test.loop.isOwnerThread
            let grouped = await withTaskGroup(of: Bool.self) { group in
                group.addTask { test.loop.isOwnerThread }
                return await group.next()!
            }
            return [test.loop.isOwnerThread, await isolated.value, await unisolated.value, await child, grouped]
        }
        #expect(places == [true, true, true, true, true])
    }

    @Test func atOneInstantTimersFireFirstThenSleepersInTheOrderTheyBeganToSleep() async throws {
        let order = try await withVirtualLoop { test in
            let log = ShapeLog()
            for name in ["first sleeper", "second sleeper"] {
                Task { try await test.clock.sleep(for: .seconds(1)); log.add("\(name) at \(test.clock.now)") }
            }
            let timer = try LoopTimer(after: .seconds(1), clock: test.clock, label: "t") { _ in log.add("timer") }
            test.loop.add(timer, mode: .default)
            await test.advance(to: LoopInstant(nanoseconds: 1_000_000_000))
            return log.all
        }
        #expect(order == ["timer", "first sleeper at 1 s", "second sleeper at 1 s"])
    }

    @Test func runUntilIdleRunsWhatIsQueuedWithoutMovingTheClock() async throws {
        let (ran, now) = try await withVirtualLoop { test in
            let flag = Mutex(false)
            Task { flag.withLock { $0 = true } }
            #expect(!flag.withLock { $0 })   // queued behind the body's job
            let settled = await test.runUntilIdle()
            #expect(settled)
            return (flag.withLock { $0 }, test.clock.now)
        }
        #expect(ran && now == .zero)
    }

    @Test func anExpectationInTheBodyIsRecordedInTheTest() async throws {
        try await withKnownIssue {
            try await withVirtualLoop { _ in #expect(Bool(false), "inside the body") }
        } matching: { issue in
            issue.comments.map(\.rawValue) == ["inside the body"]
        }
    }

    @Test func aFailurePointsAtTheCallAndOpensWithWhatHappened() async throws {
        let line = #line + 3
        try await withKnownIssue {
            try await withVirtualLoop { test in
                await test.advance(by: .seconds(-1))
            }
        } matching: { issue in
            issue.error.map(String.init(describing:)) == "advance(by: -1.0 seconds): a clock cannot go back; nothing ran"
                && issue.sourceLocation?.fileName == "VirtualLoopTests.swift" && issue.sourceLocation?.line == line
        }
    }

    @Test func tasksLeftAsleepAreReportedAndEndWithCancellation() async throws {
        let reporter = CollectingLoopTestReporter()
        let sleeper = try await withVirtualLoop(reporter: reporter) { test in
            let sleeper = Task { try await test.clock.sleep(for: .seconds(10)) }
            await test.advance(by: .seconds(3))
            return sleeper
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(reporter.messages == ["""
            Tasks still sleep on the virtual clock: 1 when the test ended
              - until 10 s (since 0 ns)
            They were resumed with CancellationError. Advance the clock past their deadlines, or cancel their tasks.
            """])
    }

    @Test func itemsLeftOnTheLoopAreReported() async throws {
        let reporter = CollectingLoopTestReporter()
        try await withVirtualLoop(reporter: reporter) { test in
            test.loop.add(try LoopTimer(after: .seconds(1), clock: test.clock, interval: .seconds(1), label: "poll") { _ in },
                          mode: .default)
            await test.advance(by: .milliseconds(2500))
        }
        #expect(reporter.messages == ["""
            Items are still on the test's loop: 1 when the test ended
              - timer 'poll' (next fire at 3 s) is still in kCFRunLoopDefaultMode
            """])
    }

    @Test func aTaskThatNeverWaitsIsReportedInsteadOfHanging() async throws {
        let reporter = CollectingLoopTestReporter()
        let settled = try await withVirtualLoop(reporter: reporter) { test in
            let spinner = Task { while !Task.isCancelled { await Task.yield() } }
            let settled = await test.runUntilIdle(maxPasses: 50)
            spinner.cancel()
            return settled
        }
        #expect(!settled)
        #expect(reporter.messages.count == 1)
        #expect(reporter.messages.first?.hasPrefix("The loop did not settle: runUntilIdle() ran 50 passes and work was still due after each\n") == true)
    }

    @Test func dispatchWorkThatComesBackIsReportedWithWhereItStarted() async throws {
        let reporter = CollectingLoopTestReporter()
        let line = #line + 15
        let resumedInTheWait = try await withVirtualLoop(reporter: reporter) { test in
            // The resume comes from another thread while the driver waits for work off the loop
            // (a resume before the body is suspended would let it go on at once, on the loop's
            // thread, with nothing arriving): the thread goes on at that wait's BeforeWaiting, then
            // waits until the loop sleeps. No time passes on purpose; each wait has a deadline.
            let waitBegins = DispatchSemaphore(value: 0)
            let observer = LoopObserver(activities: .beforeWaiting, label: "test.offLoopWaitBegins") { _, _ in
                waitBegins.signal()
            }
            test.loop.add(observer, mode: VirtualLoopTest.offLoopWaitMode)
            defer { test.loop.remove(observer, mode: VirtualLoopTest.offLoopWaitMode) }
            return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                DispatchQueue.global().async {
                    let sleeping = waitBegins.wait(timeout: .now() + 10) == .success && test.loop.waitUntilWaiting(timeout: .seconds(10))
                    continuation.resume(returning: sleeping)
                }
            }
        }
        #expect(resumedInTheWait)
        let message = try #require(reporter.messages.first)
        #expect(reporter.messages.count == 1)
        #expect(message.hasPrefix("Work left the test's loop: 1 piece, not run in step with it\n  - a job or wake-up arrived from thread '"))
        #expect(message.contains("VirtualLoopTests.swift:\(line):"), "\(message)")
    }

    @Test func aSleepOnARealClockIsReportedAndEndsAtOnce() async throws {
        let reporter = CollectingLoopTestReporter()
        let cancelled = try await withVirtualLoop(reporter: reporter) { _ in
            // An hour of real time, which no advance of the virtual clock can end: the loop is
            // told the moment the sleep begins and queues its wake-up at once. (Were it not,
            // the body would be stuck and cancelled after `offLoopTimeout`: the sleep throws.)
            try await RealClockSleepInput.onContinuousClock(for: .seconds(3600))
            return Task.isCancelled
        }
        #expect(!cancelled)
        // One report: the sleep's wake-up resumes nothing from another thread. The hour read
        // back says the loop got the sleep's own clock and deadline.
        #expect(Self.placesMarked(reporter.messages, lines: [RealClockSleepInput.onContinuousClockLine])
                == [Self.oneRealSleepReport("a sleep on ContinuousClock for about 3600.0 seconds")])
    }

    @Test func aSleepOnSuspendingClockInATaskOfTheBodyEndsAtOnceAndCancelsNobody() async throws {
        let reporter = CollectingLoopTestReporter()
        let (slept, bodyCancelled) = try await withVirtualLoop(reporter: reporter) { _ in
            let sleeper = Task.detached {
                try await RealClockSleepInput.onSuspendingClock(for: .seconds(5400))
                return Task.isCancelled
            }
            return (await sleeper.result, Task.isCancelled)
        }
        #expect(try slept.get() == false)
        #expect(!bodyCancelled)
        #expect(Self.placesMarked(reporter.messages, lines: [RealClockSleepInput.onSuspendingClockLine])
                == [Self.oneRealSleepReport("a sleep on SuspendingClock for about 5400.0 seconds")])
    }

    @Test func realClockSleepsOfEveryTaskOnTheLoopAreSeenWhenTheyBeginAndEndAtOnce() async throws {
        let reporter = CollectingLoopTestReporter()
        let (isolated, child) = try await withVirtualLoop(reporter: reporter) { test in
            // A task isolated to the test: the sleep is nonisolated, so the task hops to the
            // global executor on the way (queued on the loop by the runtime hook). A child task
            // prefers the loop and begins its sleep (MonotonicClock's, on SuspendingClock)
            // before the hop comes back, so it is the first seen.
            let isolated = Task { _ = test; try await RealClockSleepInput.nanoseconds(7_000_000_000_000) }
            async let child: Void = RealClockSleepInput.onMonotonicClock(for: .seconds(250))
            var childThrew: (any Error)?
            do { try await child } catch { childThrew = error }
            return (await isolated.result, childThrew)
        }
        #expect(throws: Never.self) { try isolated.get() }
        #expect(child == nil)
        let lines = [RealClockSleepInput.onMonotonicClockLine, RealClockSleepInput.nanosecondsLine]
        #expect(Self.placesMarked(reporter.messages, lines: lines) == ["""
            The test slept on a real clock: 2 sleeps, which virtual time cannot end
              - a sleep on SuspendingClock for about 250.0 seconds, <place>
              - a sleep on ContinuousClock for about 7000.0 seconds, <place>
              \(Self.realSleepAdvice)
            """])
    }

    @Test func aRealClockSleepWhoseDeadlineHasPassedIsNotReported() async throws {
        let reporter = CollectingLoopTestReporter()
        try await withVirtualLoop(reporter: reporter) { _ in
            try await RealClockSleepInput.untilAPastDeadline()
        }
        #expect(reporter.messages.isEmpty)
    }

    /// A common polling helper (`RealClockSleepInput.poll`). Each sleep ends at once through the
    /// loop's queue, so the task that sets `done` runs between two polls. When the sleeping task was cancelled instead, every later sleep
    /// threw at once without suspending: the task never ran and the loop polled forever, holding
    /// the loop's thread (the bound on polls makes that a failure, not a hang). A poll written in
    /// the body itself hops into the nonisolated sleep through the loop's queue at each turn, so
    /// it let the task run even then.
    @Test func aPollingLoopWithARealClockSleepLetsTheLoopRunAndFinishes() async throws {
        let reporter = CollectingLoopTestReporter()
        let (done, polls) = try await withVirtualLoop(reporter: reporter) { test in
            let done = Mutex(false)
            Task {
                _ = test
                for _ in 0..<3 { await Task.yield() }
                done.withLock { $0 = true }
            }
            let polls = await RealClockSleepInput.poll(until: { done.withLock { $0 } }, maxPolls: 1000)
            return (done.withLock { $0 }, polls)
        }
        #expect(done)
        #expect(polls > 1)
        let report = reporter.messages.first?.split(separator: "\n").map(String.init) ?? []
        #expect(reporter.messages.count == 1)
        #expect(report.first == "The test slept on a real clock: \(polls) sleeps, which virtual time cannot end")
        #expect(report.dropFirst().prefix { $0.hasPrefix("  - a sleep on ContinuousClock for about 3600.0 seconds, ") }.count == polls)
    }

    @Test func theFirstSixteenRealClockSleepsAreListedAndTheRestCounted() async throws {
        let reporter = CollectingLoopTestReporter()
        try await withVirtualLoop(reporter: reporter) { _ in
            for _ in 0..<20 {
                try await RealClockSleepInput.onContinuousClock(for: .seconds(3600))
            }
        }
        let line = RealClockSleepInput.onContinuousClockLine
        let listed = Array(repeating: "  - a sleep on ContinuousClock for about 3600.0 seconds, <place>", count: 16)
        #expect(Self.placesMarked(reporter.messages, lines: Array(repeating: line, count: 16)) == ["""
            The test slept on a real clock: 20 sleeps, which virtual time cannot end
            \(listed.joined(separator: "\n"))
              - … and 4 more
              \(Self.realSleepAdvice)
            """])
        // `placesMarked` also takes a stack with no frame of the program; at least one of the 16
        // stacks, each begun in this body, has its line (so a capture that always failed fails).
        #expect(reporter.messages.first?.contains(", at \(RealClockSleepInput.file):\(line)\n") == true)
    }

    /// `messages` with the place of each reported sleep, in order, replaced by `<place>` when it
    /// is the line of `lines` in `RealClockSleepInput`'s file or the stack had no frame of the
    /// program. The runtime can resume a task on its way into the stdlib's nonisolated sleep
    /// from a new job, without the caller's frames (seen while the sleeping task was cancelled;
    /// none of 4,000 sleeps in 200 runs of these tests since lacked them).
    private static func placesMarked(_ messages: [String], lines: [Int]) -> [String] {
        messages.map { message in
            var remaining = lines[...]
            return message.split(separator: "\n", omittingEmptySubsequences: false).map { text -> String in
                guard text.hasPrefix("  - a sleep on "), let line = remaining.popFirst() else { return String(text) }
                for place in [", at \(RealClockSleepInput.file):\(line)", ", with no frame of the program on the stack"] where text.hasSuffix(place) {
                    return text.dropLast(place.count) + ", <place>"
                }
                return String(text)
            }.joined(separator: "\n")
        }
    }

    /// The report of a test that slept once on a real clock, `sleep` its line's description.
    private static func oneRealSleepReport(_ sleep: String) -> String {
        """
        The test slept on a real clock: 1 sleep, which virtual time cannot end
          - \(sleep), <place>
          \(realSleepAdvice)
        """
    }

    private static let realSleepAdvice = "The test would wait for real time, and what runs meanwhile would depend on timing. "
        + "Each sleep ended at once, as if its time had passed: its task went on behind the jobs already queued on the "
        + "loop. Sleep on the test's virtual clock (`test.clock`) instead."

    @Test func aBodyNothingCanResumeIsReportedAndCancelled() async throws {
        let reporter = CollectingLoopTestReporter()
        await #expect(throws: CancellationError.self) {
            try await withVirtualLoop(offLoopTimeout: .milliseconds(50), reporter: reporter) { test in
                try await test.clock.sleep(for: .seconds(1))   // nobody advances the clock
            }
        }
        #expect(reporter.messages == ["""
            The test body is suspended and nothing on the loop can resume it: no input came from another thread within 0.05 seconds. Its task was cancelled.
              1 task(s) sleep on the virtual clock, first until 1 s (the clock reads 0 ns): advance the clock to wake them.
            """])
    }

    @Test func aMainActorHopIsWaitedFor() async throws {
        let order = try await withVirtualLoop { test in
            let log = ShapeLog()
            Task { @MainActor in log.add("main actor task") }
            Task { _ = test; log.add("loop task") }
            await test.runUntilIdle()
            log.add("body")
            return log.all
        }
        #expect(order == ["main actor task", "loop task", "body"])
    }
}
