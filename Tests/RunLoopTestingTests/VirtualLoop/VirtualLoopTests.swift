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

    @Test func aSleepOnARealClockIsReported() async throws {
        let reporter = CollectingLoopTestReporter()
        try await withVirtualLoop(reporter: reporter) { _ in
            // ContinuousClock: real time, waited for off the loop, and the task comes back from
            // another thread. (Long enough that its deadline cannot pass before the sleep is
            // queued: a job whose deadline has passed is queued at once, from the loop's thread.)
            try await Task.sleep(for: .milliseconds(200))
        }
        let message = try #require(reporter.messages.first)
        #expect(message.contains("with no frame of the program on the stack"), "\(message)")
    }

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
