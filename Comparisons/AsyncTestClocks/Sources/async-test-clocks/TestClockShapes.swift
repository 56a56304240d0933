// The twelve shapes of AsyncShapes.swift written for pointfreeco's TestClock (swift-clocks 1.1.1),
// as its documentation writes a test: tasks on the global executor, `await clock.advance(by:)`,
// state read back through ConcurrencyExtras' LockIsolated. Each sees the same lines as the
// virtual-loop version when the run goes in the one right order (times are printed the way
// LoopInstant prints them), so both sides share `expected`.
import Clocks
import ConcurrencyExtras
import Synchronization

/// One shape on TestClock; `expected` comes from the virtual-loop shape of the same name.
struct TestClockShape: Sendable {
    let name: String
    let run: @Sendable () async throws -> [String]
}

/// "1 s", "1500 ms", "0 ns": a TestClock reading written as LoopInstant writes one.
func reading(_ clock: TestClock<Duration>) -> String {
    let elapsed = TestClock<Duration>.Instant().duration(to: clock.now)
    let nanoseconds = elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
    if nanoseconds == 0 { return "0 ns" }
    if nanoseconds % 1_000_000_000 == 0 { return "\(nanoseconds / 1_000_000_000) s" }
    if nanoseconds % 1_000_000 == 0 { return "\(nanoseconds / 1_000_000) ms" }
    return "\(nanoseconds) ns"
}

enum TestClockShapes {
    static let all: [TestClockShape] = [
        threeSleepers, equalDeadlines, cancelledWhileDue, taskGroupChildrenSleep, streamFedByTimer,
        actorAwaitsActor, debounce, timeoutRace, cancellationHandler, mainActorHop, sleepInTimerCallback,
        sleepBegunDuringAdvance,
    ]

    static let threeSleepers = TestClockShape(name: "3-sleeper order") {
        let clock = TestClock()
        let log = LockIsolated<[String]>([])
        for seconds in [3, 1, 2] {
            Task { try await clock.sleep(for: .seconds(seconds)); log.withValue { $0.append("\(seconds)s") } }
        }
        await clock.advance(by: .seconds(5))
        return log.value
    }

    static let equalDeadlines = TestClockShape(name: "equal deadlines") {
        let clock = TestClock()
        let log = LockIsolated<[String]>([])
        let deadline = clock.now.advanced(by: .seconds(1))
        for name in ["a", "b", "c", "d", "e"] {
            Task { try await clock.sleep(until: deadline); log.withValue { $0.append(name) } }
        }
        await clock.advance(by: .seconds(1))
        return log.value
    }

    static let cancelledWhileDue = TestClockShape(name: "sleeper cancelled while due") {
        let clock = TestClock()
        let log = LockIsolated<[String]>([])
        let victim = Mutex<Task<Void, any Error>?>(nil)
        Task {
            try await clock.sleep(for: .seconds(1))
            log.withValue { $0.append("first woke") }
            victim.withLock { $0?.cancel() }
        }
        let second = Task {
            try await clock.sleep(for: .seconds(1))
            log.withValue { $0.append("second woke") }
        }
        victim.withLock { $0 = second }
        await clock.advance(by: .seconds(2))
        if case .failure(is CancellationError) = await second.result { log.withValue { $0.append("second cancelled") } }
        return log.value
    }

    static let taskGroupChildrenSleep = TestClockShape(name: "task group, children sleep") {
        let clock = TestClock()
        let group = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for seconds in [3, 1, 2] {
                    group.addTask { try await clock.sleep(for: .seconds(seconds)); return seconds }
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
        await clock.advance(by: .seconds(3))
        return try await group.value
    }

    /// A repeating timer (swift-clocks' `timer(interval:)`) feeds an AsyncStream.
    static let streamFedByTimer = TestClockShape(name: "AsyncStream fed by a loop timer") {
        let clock = TestClock()
        let (ticks, input) = AsyncStream.makeStream(of: Int.self)
        let feeder = Task {
            var count = 0
            for await _ in clock.timer(interval: .seconds(1)) {
                count += 1
                input.yield(count)
            }
        }
        let reader = Task {
            var seen: [String] = []
            for await tick in ticks.prefix(3) { seen.append("tick \(tick) at \(reading(clock))") }
            return seen
        }
        await clock.advance(by: .seconds(3))
        feeder.cancel()
        input.finish()
        return await reader.value
    }

    static let actorAwaitsActor = TestClockShape(name: "actor awaits another actor") {
        let clock = TestClock()
        let ledger = ClockLedger(clock: clock)
        let teller = ClockTeller(clock: clock, ledger: ledger)
        let deposits = Task { try await teller.deposit([10, 20, 30]) }
        let audit = Task {
            try await clock.sleep(for: .seconds(2))
            await ledger.note("audit")
        }
        await clock.advance(by: .seconds(3))
        try await deposits.value
        try await audit.value
        return await ledger.lines
    }

    static let debounce = TestClockShape(name: "debounce") {
        let clock = TestClock()
        let log = LockIsolated<[String]>([])
        let debouncer = ClockDebouncer(clock: clock, delay: .milliseconds(300)) { value in
            log.withValue { $0.append("\(value) at \(reading(clock))") }
        }
        await debouncer.send("a")
        await clock.advance(by: .milliseconds(100))
        await debouncer.send("b")
        await clock.advance(by: .milliseconds(100))
        await debouncer.send("c")
        await clock.advance(by: .milliseconds(600))
        await debouncer.send("d")
        await clock.advance(by: .milliseconds(300))
        return log.value
    }

    static let timeoutRace = TestClockShape(name: "timeout race") {
        let clock = TestClock()
        var lines: [String] = []
        for (work, limit) in [(2, 1), (1, 2), (1, 1)] {
            let race = Task {
                try await withThrowingTaskGroup(of: String.self) { group in
                    group.addTask { try await clock.sleep(for: .seconds(work)); return "work at \(reading(clock))" }
                    group.addTask { try await clock.sleep(for: .seconds(limit)); return "timed out at \(reading(clock))" }
                    let first = try await group.next()!
                    group.cancelAll()
                    return first
                }
            }
            await clock.advance(by: .seconds(max(work, limit)))
            lines.append(try await race.value)
        }
        return lines
    }

    static let cancellationHandler = TestClockShape(name: "withTaskCancellationHandler") {
        let clock = TestClock()
        let log = LockIsolated<[String]>([])
        let sleeper = Task {
            await withTaskCancellationHandler {
                log.withValue { $0.append("started") }
                do {
                    try await clock.sleep(for: .seconds(5))
                    log.withValue { $0.append("operation ended: slept") }
                } catch {
                    log.withValue { $0.append("operation ended: \(type(of: error))") }
                }
            } onCancel: {
                log.withValue { $0.append("onCancel at \(reading(clock))") }
            }
        }
        await clock.advance(by: .seconds(1))
        sleeper.cancel()
        await sleeper.value
        return log.value
    }

    static let mainActorHop = TestClockShape(name: "@MainActor hop") {
        let clock = TestClock()
        let log = LockIsolated<[String]>([])
        Task {
            try await clock.sleep(for: .seconds(1))
            log.withValue { $0.append("first woke") }
            await MainActor.run { log.withValue { $0.append("on the main actor") } }
            log.withValue { $0.append("first back") }
        }
        Task {
            try await clock.sleep(for: .seconds(1))
            log.withValue { $0.append("second woke") }
        }
        await clock.advance(by: .seconds(1))
        return log.value
    }

    /// The callout is the body of a one-tick timer loop; it starts a task that sleeps.
    static let sleepInTimerCallback = TestClockShape(name: "sleep inside a loop callout") {
        let clock = TestClock()
        let log = LockIsolated<[String]>([])
        Task {
            for await _ in clock.timer(interval: .seconds(1)).prefix(1) {
                log.withValue { $0.append("timer at \(reading(clock))") }
                Task {
                    try await clock.sleep(for: .milliseconds(500))
                    log.withValue { $0.append("callout's sleeper at \(reading(clock))") }
                }
            }
        }
        Task {
            try await clock.sleep(for: .milliseconds(1500))
            log.withValue { $0.append("earlier sleeper at \(reading(clock))") }
        }
        await clock.advance(by: .seconds(2))
        return log.value
    }

    static let sleepBegunDuringAdvance = TestClockShape(name: "sleep begun during advance") {
        let clock = TestClock()
        let log = LockIsolated<[String]>([])
        Task {
            for round in 1...3 {
                try await clock.sleep(for: .seconds(1))
                log.withValue { $0.append("tick at \(reading(clock))") }
                if round == 2 {
                    Task {
                        try await clock.sleep(for: .milliseconds(500))
                        log.withValue { $0.append("late at \(reading(clock))") }
                    }
                    Task {
                        try await clock.sleep(for: .seconds(1))
                        log.withValue { $0.append("later at \(reading(clock))") }
                    }
                }
            }
        }
        await clock.advance(by: .seconds(5))
        return log.value
    }
}

actor ClockLedger {
    let clock: TestClock<Duration>
    private(set) var lines: [String] = []
    private var total = 0
    init(clock: TestClock<Duration>) { self.clock = clock }

    func add(_ amount: Int) {
        total += amount
        lines.append("teller \(reading(clock)): \(total)")
    }

    func note(_ who: String) { lines.append("\(who) \(reading(clock)): \(total)") }
}

actor ClockTeller {
    let clock: TestClock<Duration>
    let ledger: ClockLedger
    init(clock: TestClock<Duration>, ledger: ClockLedger) {
        self.clock = clock
        self.ledger = ledger
    }

    func deposit(_ amounts: [Int]) async throws {
        for amount in amounts {
            try await clock.sleep(for: .seconds(1))
            await ledger.add(amount)
        }
    }
}

actor ClockDebouncer {
    let clock: TestClock<Duration>
    let delay: Duration
    let emit: @Sendable (String) -> Void
    private var pending: Task<Void, Never>?

    init(clock: TestClock<Duration>, delay: Duration, emit: @escaping @Sendable (String) -> Void) {
        self.clock = clock
        self.delay = delay
        self.emit = emit
    }

    func send(_ value: String) {
        pending?.cancel()
        pending = Task {
            do { try await clock.sleep(for: delay) } catch { return }
            emit(value)
        }
    }
}
