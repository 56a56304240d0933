import PThreads
import CRunLoopShims
import Synchronization
import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// Producers on another CPU hand work to a loop that sleeps between items, one item at a time,
/// through one enqueue path, while a watchdog reports every item that waits longer than a bound
/// with the loop's wake-up state (issue 26: a job queued, the loop asleep in `epoll_wait(-1)`,
/// no wake-up on its way).
///
/// Timing is what finds such a bug. A producer thread hands each item over either right after
/// the previous one ran (the loop is finishing its pass) or at the top of the loop's next pass
/// (`passCount` moves), plus a random 0 to 511 spins: so the enqueues sweep the moments in which
/// the loop decides whether to sleep. On the source-signal path every other perform lingers
/// after its item ran, so hand-overs also land inside a perform, where wake-ups are not written
/// (W3's second window). The actor path is issue 26's own harness: a task on the global
/// executor awaiting an actor whose executor is the loop.
///
/// The loop thread is pinned to the last CPU and the producer thread to CPU 0 when there are
/// two or more. Used by the `wakeup-stress` tool (release build, CI) and by the test suite.
package final class WakeUpStress: Sendable {
    package struct Report: Sendable {
        package var path: EnqueuePath
        package var hops = 0
        /// One line per stall: the item, how long it waited, the loop's wake-up state.
        package var stalls: [String] = []
        /// Items that waited past the bound while their wake-up was decided but not yet written:
        /// the producer thread had not run since (a loaded machine's scheduling), and the item ran
        /// once it wrote. Not stalls; the longest such wait is kept.
        package var lateWriters = 0
        package var longestLateWriterSeconds = 0.0
        /// What the set-up could not do (a thread left unpinned).
        package var setupNotes: [String] = []
        /// Writes of the wake-up eventfd during the run: how often the loop had to be woken.
        package var wakeUpWrites: UInt64 = 0
        package var seconds = 0.0

        package var summary: String {
            "\(path.rawValue): \(hops) hops in \(format2(seconds)) s, \(stalls.count) stalls, \(wakeUpWrites) wake-up writes"
                + (lateWriters == 0 ? "" : ", \(lateWriters) items waited for a descheduled producer's write (longest \(format2(longestLateWriterSeconds)) s)")
                + setupNotes.map { "; \($0)" }.joined()
        }
    }

    let worker: LoopThread
    /// Items handed over so far (the producer's count) and items that ran (the loop's).
    private let issued = Atomic<Int>(0)
    private let completed = Atomic<Int>(0)
    /// The pass in which the last item ran.
    private let ranInPass = Atomic<UInt64>(0)
    private let stalls = Locked<[String]>([])
    /// What the set-up could not do (a thread left unpinned); in the report, not a stall.
    private let setupNotes = Locked<[String]>([])
    private let lateWriters = Locked<(count: Int, longest: UInt64)>((0, 0))
    private let done = Locked<Bool>(false)
    private let doneSignal = PThreadCondition()
    private let doneLock = PThreadMutex()

    private init() {
        worker = LoopThread(name: "wakeup-stress")
        let cpus = WakeUpStress.onlineCPUs
        guard cpus > 1 else { return }
        let pinned = Locked(false)
        worker.loop.performAndWake {
            let failure = WakeUpStress.pinCurrentThread(to: cpus - 1, "the loop's thread")
            pinned.withLock { $0 = true }
            if let failure { self.setupNotes.withLock { $0.append(failure) } }
        }
        while !pinned.withLock({ $0 }) { sched_yield() }
    }

    static var onlineCPUs: Int { Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// Pins the calling thread to `cpu`; nil, or what failed (`pthread_setaffinity_np` returns
    /// its error number, as in a container whose CPU set leaves that CPU out). The stress still
    /// runs unpinned, and its report says so: its timing is then the scheduler's.
    static func pinCurrentThread(to cpu: Int, _ who: String) -> String? {
        let code = rlk_pin_current_thread(Int32(cpu))
        return code == 0 ? nil : "\(who) is not pinned to CPU \(cpu): \(String(cString: strerror(code)))"
    }

    /// Runs `path` for `hops` items or `seconds`, whichever ends first; an item not run within
    /// `stallBound` is a stall (reported, then the loop is woken by a direct write of its
    /// wake-up descriptor, as a debugger would, so the run can go on).
    package static func run(_ path: EnqueuePath, hops: Int, seconds: Double, stallBound: Duration) async -> Report {
        let stress = WakeUpStress()
        let loop = stress.worker.loop
        let writesBefore = loop.wakeUpWriteCount ?? 0
        let start = rlk_monotonic_ns()
        let deadline = start + UInt64(seconds * 1e9)
        let watchdog = startPThread(name: "stress-watchdog") { stress.watch(path, stallBound: stallBound) }
        if path == .actorHop {
            await stress.hopOntoActor(hops: hops, deadline: deadline)
        } else {
            let producer = startPThread(name: "stress-producer") { stress.produce(path, hops: hops, deadline: deadline) }
            pthread_join(producer, nil)
        }
        stress.doneLock.withLock {
            stress.done.withLock { $0 = true }
            stress.doneSignal.broadcast()
        }
        pthread_join(watchdog, nil)
        var report = Report(path: path)
        report.hops = stress.completed.load(ordering: .acquiring)
        report.stalls = stress.stalls.withLock { $0 }
        report.setupNotes = stress.setupNotes.withLock { $0 }
        (report.lateWriters, report.longestLateWriterSeconds) = stress.lateWriters.withLock { ($0.count, Double($0.longest) / 1e9) }
        report.wakeUpWrites = (loop.wakeUpWriteCount ?? 0) &- writesBefore
        report.seconds = Double(rlk_monotonic_ns() - start) / 1e9
        stress.worker.stop()
        return report
    }

    /// Counted on the loop's thread as each item runs, with the pass it runs in.
    func itemRan() {
        ranInPass.store(worker.loop.passCount, ordering: .relaxed)
        completed.wrappingAdd(1, ordering: .releasing)
    }

    private var gaveUp: Bool { stalls.withLock { $0.count > 1 } }

    /// The signal path's perform, after the item ran: every other item stays in the perform for
    /// 0 to 2,047 more spins (up to about two microseconds), so the next hand-over often lands
    /// while the loop is still performing. From a pass's first perform, wake-ups are not written
    /// (W3's second window, whose flag the loop sets without its lock): the stress sweeps that
    /// window too, not only the moments the loop decides to sleep. Loop thread.
    private func lingerInPerform() {
        let count = completed.load(ordering: .relaxed)
        guard count & 1 == 0 else { return }
        var spins = Int(truncatingIfNeeded: (UInt64(count) &* 0x9E37_79B9_7F4A_7C15) >> 53)   // 0 to 2,047
        while spins > 0 { spins = opaqueIncrement(spins) - 2 }
    }

    /// The actor path: one call at a time from a task on the global executor.
    private func hopOntoActor(hops: Int, deadline: UInt64) async {
        let actor = LoopPinnedCounter(stress: self)
        var jitter = Jitter(seed: 0x9E37_79B9)
        for index in 0..<hops {
            if index & 15 == 0 && (rlk_monotonic_ns() > deadline || gaveUp) { break }
            jitter.spin(upTo: 512)
            issued.store(index + 1, ordering: .releasing)
            await actor.hop()
        }
    }

    /// The other paths, from a thread pinned to CPU 0: hand an item over, spin until it ran.
    private func produce(_ path: EnqueuePath, hops: Int, deadline: UInt64) {
        if WakeUpStress.onlineCPUs > 1, let failure = WakeUpStress.pinCurrentThread(to: 0, "the producer") {
            setupNotes.withLock { $0.append(failure) }
        }
        let loop = worker.loop
        let source = LoopSource(label: "stress-source") {
            self.itemRan()
            self.lingerInPerform()
        }
        let port: LoopPortSource
        do {
            port = try LoopPortSource(label: "stress-port", capacity: 16) { _ in self.itemRan() }
        } catch {
            stalls.withLock { $0.append("no port: \(error)") }
            return
        }
        if path == .signalAndWakeUp { loop.add(source, mode: .default) }
        if path == .portSend { loop.add(port, mode: .default) }
        defer {
            source.invalidate()
            port.invalidate()
        }
        var jitter = Jitter(seed: 0x85EB_CA6B)
        for index in 0..<hops {
            if index & 15 == 0 && (rlk_monotonic_ns() > deadline || gaveUp) { break }
            // Half the hand-overs right after the item ran (the loop is finishing its pass),
            // half at the top of its next pass.
            if jitter.coinFlip() { waitForPassBoundary(of: loop) }
            jitter.spin(upTo: 512)
            issued.store(index + 1, ordering: .releasing)
            switch path {
            case .actorHop:
                preconditionFailure("the actor path runs from a task")
            case .taskJob:
                Task(executorPreference: loop) { self.itemRan() }
            case .submit:
                loop.submit(label: "stress") { self.itemRan() }
            case .performAndWakeUp:
                loop.perform(inMode: .default, label: "stress") { self.itemRan() }
                loop.wakeUp()
            case .signalAndWakeUp:
                source.signal()
                loop.wakeUp()
            case .portSend:
                do {
                    try port.send(value: index)
                } catch {
                    stalls.withLock { $0.append("port send failed: \(error)") }
                    return
                }
            }
            while completed.load(ordering: .acquiring) <= index {
                if gaveUp || done.withLock({ $0 }) { return }
            }
        }
    }

    /// Spins until the loop starts the pass after the one the last item ran in, for at most
    /// about 2,000 spins, a microsecond or two (an item run at the top of a pass is followed by a
    /// sleep, not a pass, and a longer spin would only slow the run).
    private func waitForPassBoundary(of loop: Loop) {
        let passes = ranInPass.load(ordering: .relaxed)
        var spins = 0
        while loop.passCount == passes && spins < 2_000 { spins = opaqueIncrement(spins) }
    }

    /// Every 20 ms: an item handed over and not run for `stallBound` is a stall, recorded with
    /// the loop's wake-up state; the wake-up descriptor is then written directly so the run can
    /// go on. The same item stalling again after that write gives up.
    ///
    /// Except while a wake-up write is in flight: the producer decided to write and has not
    /// run since (on a machine loaded with pinned busy threads a low-priority producer can wait
    /// seconds for its CPU). Its enqueue is not finished, so nothing is lost yet: the watchdog
    /// waits up to `lateWriterBound` more for the write, counts the item as late, and calls it a
    /// stall only if the write never comes or the item still waits after it.
    private func watch(_ path: EnqueuePath, stallBound: Duration) {
        let bound = UInt64(stallBound.components.seconds) * 1_000_000_000
            + UInt64(stallBound.components.attoseconds / 1_000_000_000)
        let lateWriterBound = 6 * bound
        var lastCompleted = -1
        var since = rlk_monotonic_ns()
        var rescued = false
        var lateWriterSince: UInt64?      // the item's write was first seen in flight
        var writeLastInFlight: UInt64 = 0  // and last seen in flight
        while true {
            let finished = doneLock.withLock { () -> Bool in
                if done.withLock({ $0 }) { return true }
                _ = doneSignal.wait(doneLock, untilMonotonicNanoseconds: rlk_monotonic_ns() + 20_000_000)
                return done.withLock { $0 }
            }
            if finished { return }
            let ran = completed.load(ordering: .acquiring)
            let now = rlk_monotonic_ns()
            if ran != lastCompleted {
                if let late = lateWriterSince {
                    lateWriters.withLock { $0 = ($0.count + 1, max($0.longest, now - late + bound)) }
                }
                lastCompleted = ran
                since = now
                rescued = false
                lateWriterSince = nil
                continue
            }
            guard issued.load(ordering: .acquiring) > ran, now - since > bound else { continue }
            // A starved producer (its write in flight) or a starved loop thread (runnable, not
            // blocked in its wait) is late, not lost: the same longer bound applies.
            if worker.loop.hasWakeUpWritesInFlight || worker.loop.isLoopThreadRunnable {
                let late = lateWriterSince ?? now
                lateWriterSince = late
                writeLastInFlight = now
                if now - late < lateWriterBound { continue }
            } else if lateWriterSince != nil, now - writeLastInFlight < bound {
                continue   // the write has been made: the loop has the usual bound to run the item
            }
            let state = worker.loop.wakeUpStateDescription()
            stalls.withLock { $0.append("item \(ran + 1) waited \(format2(Double(now - since) / 1e9)) s (\(path.rawValue)): \(state)") }
            if rescued {
                stalls.withLock { $0.append("a direct write of the wake-up descriptor did not help either; giving up") }
                return
            }
            worker.loop.forceWakeUpWrite()
            rescued = true
            since = now
        }
    }
}

/// How a producer on another thread hands one item to the loop.
package enum EnqueuePath: String, CaseIterable, Sendable {
    case actorHop = "executor job: a task awaits an actor on the loop"
    case taskJob = "executor job: a thread starts a task that prefers the loop"
    case submit = "submit"
    case performAndWakeUp = "perform + wakeUp"
    case signalAndWakeUp = "source signal + wakeUp"
    case portSend = "port send"

    /// The path wakes the loop through its wake-up eventfd (submit and ports have their own).
    package var usesWakeUpDescriptor: Bool { self != .submit && self != .portSend }
}

/// An actor whose executor is the stress loop.
private actor LoopPinnedCounter {
    let stress: WakeUpStress
    nonisolated var unownedExecutor: UnownedSerialExecutor { stress.worker.loop.asUnownedSerialExecutor() }
    init(stress: WakeUpStress) { self.stress = stress }
    func hop() { stress.itemRan() }
}

/// Random spins of 0 to `limit - 1` iterations (about a nanosecond each in a release build)
/// and coin flips, from a xorshift generator.
private struct Jitter {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func spin(upTo limit: Int) {
        var count = Int(next() % UInt64(limit))
        while count > 0 { count = opaqueIncrement(count) - 2 }
    }

    mutating func coinFlip() -> Bool { next() & 1 == 0 }

    private mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

/// `value + 1` through a call the optimiser cannot see into, so a spin loop is not removed.
@inline(never)
private func opaqueIncrement(_ value: Int) -> Int { value + 1 }

/// Seconds with two decimals.
private func format2(_ seconds: Double) -> String {
    let hundredths = Int((seconds * 100).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}
