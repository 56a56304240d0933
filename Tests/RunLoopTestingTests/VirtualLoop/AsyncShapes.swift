// Twelve shapes of async code that a test on a virtual clock must see in one order every time,
// written for `withVirtualLoop`. `VirtualLoopShapeTests` runs each 10,000 times; the comparison
// package Comparisons/AsyncTestClocks runs this same file (a symbolic link) beside the same
// shapes written for swift-clocks' TestClock. Each returns what it saw; a run fails when that
// differs from `expected` or the harness reported a failure.
// Every sleep here is on the test's virtual clock (`test.clock`): it ends when the shape
// advances that clock, never after real time.
import RunLoopTesting
import Synchronization

/// One shape: a name, what a run must see, and the run.
struct AsyncShape: Sendable {
    let name: String
    let expected: [String]
    let run: @Sendable (_ reporter: any LoopTestReporter) async throws -> [String]
}

/// Lines appended from any thread (the loop's, the main thread in the main-actor shape).
final class ShapeLog: Sendable {
    private let lines = Mutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

enum VirtualLoopShapes {
    static let all: [AsyncShape] = [
        threeSleepers, equalDeadlines, cancelledWhileDue, taskGroupChildrenSleep, streamFedByLoopTimer,
        actorAwaitsActor, debounce, timeoutRace, cancellationHandler, mainActorHop, sleepInLoopCallout,
        sleepBegunDuringAdvance,
    ]

    /// Three tasks sleep 3 s, 1 s and 2 s; one advance of 5 s.
    static let threeSleepers = AsyncShape(name: "3-sleeper order", expected: ["1s", "2s", "3s"]) { reporter in
        try await withVirtualLoop(reporter: reporter) { test in
            let log = ShapeLog()
            for seconds in [3, 1, 2] {
                Task { try await test.clock.sleep(for: .seconds(seconds)); log.add("\(seconds)s") }
            }
            await test.advance(by: .seconds(5))
            return log.all
        }
    }

    /// Five tasks sleep until the same instant: they resume in the order they began to sleep.
    static let equalDeadlines = AsyncShape(name: "equal deadlines", expected: ["a", "b", "c", "d", "e"]) { reporter in
        try await withVirtualLoop(reporter: reporter) { test in
            let log = ShapeLog()
            let deadline = test.clock.now.advanced(by: .seconds(1))
            for name in ["a", "b", "c", "d", "e"] {
                Task { try await test.clock.sleep(until: deadline); log.add(name) }
            }
            await test.advance(by: .seconds(1))
            return log.all
        }
    }

    /// Two sleepers due at 1 s; the first, once awake, cancels the second, which is due but not
    /// yet resumed: it ends with CancellationError.
    static let cancelledWhileDue = AsyncShape(name: "sleeper cancelled while due",
                                              expected: ["first woke", "second cancelled"]) { reporter in
        try await withVirtualLoop(reporter: reporter) { test in
            let log = ShapeLog()
            let victim = Mutex<Task<Void, any Error>?>(nil)
            Task {
                try await test.clock.sleep(for: .seconds(1))
                log.add("first woke")
                victim.withLock { $0?.cancel() }
            }
            let second = Task {
                try await test.clock.sleep(for: .seconds(1))   // begins to sleep after the first
                log.add("second woke")
            }
            victim.withLock { $0 = second }
            await test.advance(by: .seconds(2))
            if case .failure(is CancellationError) = await second.result { log.add("second cancelled") }
            return log.all
        }
    }

    /// A task group whose children sleep 3 s, 1 s and 2 s; the group returns them as they end.
    static let taskGroupChildrenSleep = AsyncShape(name: "task group, children sleep",
                                                   expected: ["1", "2", "3", "sum 6"]) { reporter in
        try await withVirtualLoop(reporter: reporter) { test in
            let group = Task {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for seconds in [3, 1, 2] {
                        group.addTask { try await test.clock.sleep(for: .seconds(seconds)); return seconds }
                    }
                    var order: [String] = []
                    var sum = 0
                    for try await seconds in group {
                        order.append("\(seconds)")
                        sum += seconds
                    }
                    return order + ["sum \(sum)"]
                }
            }
            await test.advance(by: .seconds(3))
            return try await group.value
        }
    }

    /// A repeating loop timer feeds an AsyncStream; a task reads three ticks.
    static let streamFedByLoopTimer = AsyncShape(name: "AsyncStream fed by a loop timer",
                                                 expected: ["tick 1 at 1 s", "tick 2 at 2 s", "tick 3 at 3 s"]) { reporter in
        try await withVirtualLoop(reporter: reporter) { test in
            let (ticks, input) = AsyncStream.makeStream(of: Int.self)
            let count = Mutex(0)
            let timer = try LoopTimer(after: .seconds(1), clock: test.clock, interval: .seconds(1), label: "ticker") { _ in
                input.yield(count.withLock { $0 += 1; return $0 })
            }
            test.loop.add(timer, mode: .default)
            let reader = Task {
                var seen: [String] = []
                for await tick in ticks.prefix(3) { seen.append("tick \(tick) at \(test.clock.now)") }
                return seen
            }
            await test.advance(by: .seconds(3))
            timer.invalidate()
            input.finish()
            return await reader.value
        }
    }

    /// An actor on the loop awaits another actor on the loop after each sleep.
    static let actorAwaitsActor = AsyncShape(name: "actor awaits another actor",
                                             expected: ["teller 1 s: 10", "audit 2 s: 10", "teller 2 s: 30", "teller 3 s: 60"]) { reporter in
        try await withVirtualLoop(reporter: reporter) { test in
            let ledger = Ledger(loop: test.loop)
            let teller = Teller(loop: test.loop, clock: test.clock, ledger: ledger)
            let deposits = Task { try await teller.deposit([10, 20, 30]) }
            let audit = Task {
                try await test.clock.sleep(for: .seconds(2))   // due with the second deposit, begun before it
                await ledger.note("audit")
            }
            await test.advance(by: .seconds(3))
            try await deposits.value
            try await audit.value
            return await ledger.lines
        }
    }

    /// A debouncer on the loop: a value is sent 300 ms after the last of a burst.
    static let debounce = AsyncShape(name: "debounce", expected: ["c at 500 ms", "d at 1100 ms"]) { reporter in
        try await withVirtualLoop(reporter: reporter) { test in
            let log = ShapeLog()
            let debouncer = Debouncer(loop: test.loop, clock: test.clock, delay: .milliseconds(300)) { value, now in
                log.add("\(value) at \(now)")
            }
            await debouncer.send("a")
            await test.advance(by: .milliseconds(100))
            await debouncer.send("b")
            await test.advance(by: .milliseconds(100))
            await debouncer.send("c")
            await test.advance(by: .milliseconds(600))
            await debouncer.send("d")
            await test.advance(by: .milliseconds(300))
            return log.all
        }
    }

    /// Work raced against a timeout in a task group: slower work, faster work, and a tie (the
    /// work began to sleep first, so it wins).
    static let timeoutRace = AsyncShape(name: "timeout race",
                                        expected: ["timed out at 1 s", "work at 3 s", "work at 5 s"]) { reporter in
        try await withVirtualLoop(reporter: reporter) { test in
            let log = ShapeLog()
            for (work, limit) in [(2, 1), (1, 2), (1, 1)] {
                let race = Task { try await raceTimeout(work: .seconds(work), limit: .seconds(limit), clock: test.clock) }
                await test.advance(by: .seconds(max(work, limit)))
                log.add(try await race.value)
            }
            return log.all
        }
    }

    /// A task cancelled while it sleeps inside withTaskCancellationHandler.
    static let cancellationHandler = AsyncShape(name: "withTaskCancellationHandler",
                                                expected: ["started", "onCancel at 1 s", "operation ended: CancellationError"]) { reporter in
        try await withVirtualLoop(reporter: reporter) { test in
            let log = ShapeLog()
            let sleeper = Task {
                await withTaskCancellationHandler {
                    log.add("started")
                    do {
                        try await test.clock.sleep(for: .seconds(5))
                        log.add("operation ended: slept")
                    } catch {
                        log.add("operation ended: \(type(of: error))")
                    }
                } onCancel: {
                    log.add("onCancel at \(test.clock.now)")
                }
            }
            await test.advance(by: .seconds(1))
            sleeper.cancel()
            await sleeper.value
            return log.all
        }
    }

    /// A task wakes, hops to the main actor and back; another task due at the same instant
    /// resumes only after it.
    static let mainActorHop = AsyncShape(name: "@MainActor hop",
                                         expected: ["first woke", "on the main actor", "first back", "second woke"]) { reporter in
        try await withVirtualLoop(reporter: reporter) { test in
            let log = ShapeLog()
            Task {
                try await test.clock.sleep(for: .seconds(1))
                log.add("first woke")
                await MainActor.run { log.add("on the main actor") }
                log.add("first back")
            }
            Task {
                try await test.clock.sleep(for: .seconds(1))
                log.add("second woke")
            }
            await test.advance(by: .seconds(1))
            return log.all
        }
    }

    /// A loop timer's callout starts a task that sleeps; it ties with a task that began to
    /// sleep earlier, which resumes first.
    static let sleepInLoopCallout = AsyncShape(name: "sleep inside a loop callout",
                                               expected: ["timer at 1 s", "earlier sleeper at 1500 ms", "callout's sleeper at 1500 ms"]) { reporter in
        try await withVirtualLoop(reporter: reporter) { test in
            let log = ShapeLog()
            let clock = test.clock
            let timer = try LoopTimer(after: .seconds(1), clock: clock, label: "fires once") { _ in
                log.add("timer at \(clock.now)")
                Task {   // made in a callout: no isolation, yet it runs on the loop
                    try await clock.sleep(for: .milliseconds(500))
                    log.add("callout's sleeper at \(clock.now)")
                }
            }
            test.loop.add(timer, mode: .default)
            Task {
                try await clock.sleep(for: .milliseconds(1500))
                log.add("earlier sleeper at \(clock.now)")
            }
            await test.advance(by: .seconds(2))
            return log.all
        }
    }

    /// Sleeps begun while an advance is under way, each inside the advance's window.
    static let sleepBegunDuringAdvance = AsyncShape(name: "sleep begun during advance",
                                                    expected: ["tick at 1 s", "tick at 2 s", "late at 2500 ms",
                                                               "tick at 3 s", "later at 3 s"]) { reporter in
        try await withVirtualLoop(reporter: reporter) { test in
            let log = ShapeLog()
            let clock = test.clock
            Task {
                for round in 1...3 {
                    try await clock.sleep(for: .seconds(1))
                    log.add("tick at \(clock.now)")
                    if round == 2 {
                        Task {
                            try await clock.sleep(for: .milliseconds(500))
                            log.add("late at \(clock.now)")
                        }
                        Task {
                            try await clock.sleep(for: .seconds(1))   // ties with the third tick, begun after it
                            log.add("later at \(clock.now)")
                        }
                    }
                }
            }
            await test.advance(by: .seconds(5))
            return log.all
        }
    }
}

/// Races `work` against `limit`: the first child to finish wins; the other is cancelled.
func raceTimeout(work: Duration, limit: Duration, clock: VirtualClock) async throws -> String {
    try await withThrowingTaskGroup(of: String.self) { group in
        group.addTask { try await clock.sleep(for: work); return "work at \(clock.now)" }
        group.addTask { try await clock.sleep(for: limit); return "timed out at \(clock.now)" }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
}

/// Keeps the ledger's lines; an actor on the test's loop.
actor Ledger {
    let loop: Loop
    private(set) var lines: [String] = []
    private var total = 0
    init(loop: Loop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func add(_ amount: Int, at time: LoopInstant) {
        total += amount
        lines.append("teller \(time): \(total)")
    }

    func note(_ who: String) { lines.append("\(who) \(loop.clock.now): \(total)") }
}

/// Deposits one amount a second into the ledger; an actor on the test's loop.
actor Teller {
    let loop: Loop
    let clock: VirtualClock
    let ledger: Ledger
    init(loop: Loop, clock: VirtualClock, ledger: Ledger) {
        self.loop = loop
        self.clock = clock
        self.ledger = ledger
    }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func deposit(_ amounts: [Int]) async throws {
        for amount in amounts {
            try await clock.sleep(for: .seconds(1))
            await ledger.add(amount, at: clock.now)
        }
    }
}

/// Sends the last value of a burst `delay` after it; an actor on the test's loop.
actor Debouncer {
    let loop: Loop
    let clock: VirtualClock
    let delay: Duration
    let emit: @Sendable (String, LoopInstant) -> Void
    private var pending: Task<Void, Never>?

    init(loop: Loop, clock: VirtualClock, delay: Duration, emit: @escaping @Sendable (String, LoopInstant) -> Void) {
        self.loop = loop
        self.clock = clock
        self.delay = delay
        self.emit = emit
    }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func send(_ value: String) {
        pending?.cancel()
        pending = Task {
            do { try await clock.sleep(for: delay) } catch { return }
            emit(value, clock.now)
        }
    }
}
