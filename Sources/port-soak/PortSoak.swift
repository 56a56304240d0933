import PThreads
import RunLoopKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What a ``PortSoak`` run measured.
struct PortSoakReport: Sendable, CustomStringConvertible {
    /// Producer threads.
    var producers = 0
    /// The port's queue limit and batch (the library's defaults unless the soak set them).
    var capacity = 0
    var messagesPerPass = 0
    /// How long the producers sent.
    var seconds = 0.0
    /// Messages queued by the producers.
    var sent = 0
    /// Messages the consumer's handler received.
    var handled = 0
    /// Sends that found the queue full and waited for room.
    var waitedForRoom = 0
    /// Resident set size (bytes) at the start.
    var residentAtStart = 0
    /// The largest resident set sampled.
    var residentMaximum = 0
    /// The resident set after the drain.
    var residentAtEnd = 0
    /// Whether every queued message was handled before the drain deadline.
    var drained = false
    /// From the producers' end to the last message handled (or the drain deadline).
    var drainSeconds = 0.0

    var description: String {
        let mib = { (bytes: Int) in "\((Double(bytes) / 1_048_576 * 10).rounded() / 10) MiB" }
        // Handled per second from the first send to the last message handled, drain included.
        let rate = seconds + drainSeconds > 0 ? Int(Double(handled) / (seconds + drainSeconds)) : 0
        let limit = capacity == LoopPortSource.unbounded ? "unbounded" : "\(capacity)"
        return "\(producers) producers, capacity \(limit), \(messagesPerPass) per pass, \(seconds) s: sent \(sent), handled \(handled) (\(sent == handled ? "nothing lost" : "LOST \(sent - handled)")), "
            + "\(rate) messages/s, \(waitedForRoom) sends waited for room; RSS start \(mib(residentAtStart)), "
            + "max \(mib(residentMaximum)), end \(mib(residentAtEnd)); drained in \((drainSeconds * 1000).rounded() / 1000) s"
    }
}

/// Several producer threads sending to one `LoopPortSource` on a `LoopThread` for a fixed
/// time: nothing may be lost, and the resident set must stay flat because the queue is bounded
/// by default (a full queue makes producers wait, as a Mach port's queue limit does).
///
/// ```swift
/// let report = try PortSoak(producers: 4).run(for: .seconds(5))   // the port's defaults
/// print(report)   // sent = handled, RSS start/max/end
/// ```
struct PortSoak: Sendable {
    /// Threads sending at once.
    var producers: Int
    /// The port's queue limit; nil: the library's default (`LoopPortSource.defaultCapacity`).
    var capacity: Int?
    /// The batch the consumer takes per pass; nil: the library's default (one, as CF).
    var messagesPerPass: Int?
    /// How often the resident set is sampled while the producers run.
    var sampleInterval: Duration = .milliseconds(250)

    /// A soak of `producers` threads into a port made with the library's defaults, unless
    /// `capacity` or `messagesPerPass` name others.
    init(producers: Int = 4, capacity: Int? = nil, messagesPerPass: Int? = nil) {
        self.producers = producers
        self.capacity = capacity
        self.messagesPerPass = messagesPerPass
    }

    /// The port: only what the soak was told to set is passed, the rest is the library's default.
    private func makePort(_ handler: @escaping @Sendable (LoopPortSource.Message) -> Void) throws(LoopError) -> LoopPortSource {
        switch (capacity, messagesPerPass) {
        case (nil, nil): try LoopPortSource(label: "soak", handler: handler)
        case (let capacity?, nil): try LoopPortSource(label: "soak", capacity: capacity, handler: handler)
        case (nil, let batch?): try LoopPortSource(label: "soak", messagesPerPass: batch, handler: handler)
        case (let capacity?, let batch?): try LoopPortSource(label: "soak", capacity: capacity, messagesPerPass: batch, handler: handler)
        }
    }

    /// Runs the producers for `duration`, then waits up to `drainTimeout` for the consumer to
    /// handle every queued message. `progress` sees each resident-set sample (bytes).
    /// - Throws: `LoopError.systemCall(_:)` when the port cannot be created (out of descriptors).
    func run(for duration: Duration, drainTimeout: Duration = .seconds(30),
                    progress: ((_ elapsed: Duration, _ residentBytes: Int, _ handled: Int) -> Void)? = nil) throws(LoopError) -> PortSoakReport {
        var report = PortSoakReport()
        report.producers = producers
        report.residentAtStart = ProcessMemory.residentBytes()
        report.residentMaximum = report.residentAtStart
        let counts = SoakCounts()
        let consumer = LoopThread(name: "soak consumer")
        defer { consumer.stop() }
        let port = try makePort { _ in counts.messageHandled() }
        defer { port.invalidate() }
        report.capacity = port.capacity
        report.messagesPerPass = port.messagesPerPass
        consumer.loop.add(port, mode: .default)

        let clock = MonotonicClock.shared
        let start = clock.now
        let deadline = start.advanced(by: duration)
        let threads = (0..<producers).map { index in
            startPThread(name: "soak producer \(index)") {
                var sent = 0, waited = 0
                while clock.now < deadline {
                    for _ in 0..<256 {
                        do throws(LoopPortSource.SendError) {
                            try port.send(value: sent)
                        } catch .full {
                            waited += 1
                            do { try port.send(.value(sent), waitingUpTo: .seconds(10)) } catch { return counts.producerEnded(sent: sent, waited: waited) }
                        } catch {
                            return counts.producerEnded(sent: sent, waited: waited)
                        }
                        sent += 1
                    }
                }
                counts.producerEnded(sent: sent, waited: waited)
            }
        }
        while let elapsed = counts.waitForProducers(until: clock.now.advanced(by: sampleInterval), count: producers, clock: clock, start: start) {
            let resident = ProcessMemory.residentBytes()
            report.residentMaximum = max(report.residentMaximum, resident)
            progress?(elapsed, resident, counts.handled)
        }
        for thread in threads { pthread_join(thread, nil) }
        let elapsed = start.duration(to: clock.now)
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        (report.sent, report.waitedForRoom) = counts.producerTotals
        let drainStart = clock.now
        report.drained = counts.waitUntilHandled(report.sent, timeout: drainTimeout)
        let drain = drainStart.duration(to: clock.now)
        report.drainSeconds = Double(drain.components.seconds) + Double(drain.components.attoseconds) / 1e18
        report.handled = counts.handled
        report.residentAtEnd = ProcessMemory.residentBytes()
        report.residentMaximum = max(report.residentMaximum, report.residentAtEnd)
        return report
    }
}

/// The soak's shared counts: handled messages (consumer), producer totals, and the waits on them.
private final class SoakCounts: Sendable {
    private let handledCount = Atomic<Int>(0)
    private let drainTarget = Atomic<Int>(.max)
    private let lock = PThreadMutex()
    private let changed = PThreadCondition()
    private let totals = Locked<(ended: Int, sent: Int, waited: Int)>((0, 0, 0))

    var handled: Int { handledCount.load(ordering: .sequentiallyConsistent) }
    var producerTotals: (Int, Int) { totals.withLock { ($0.sent, $0.waited) } }

    /// On the consumer's thread, per message: one atomic add, and a wake-up only at the target.
    func messageHandled() {
        let now = handledCount.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
        if now >= drainTarget.load(ordering: .sequentiallyConsistent) { lock.withLock { changed.broadcast() } }
    }

    func producerEnded(sent: Int, waited: Int) {
        totals.withLock { $0.ended += 1; $0.sent += sent; $0.waited += waited }
        lock.withLock { changed.broadcast() }
    }

    /// Waits until `deadline` or until all `count` producers ended; the elapsed time at a
    /// sample, nil once they all ended.
    func waitForProducers(until deadline: LoopInstant, count: Int, clock: MonotonicClock, start: LoopInstant) -> Duration? {
        lock.withLock {
            while totals.withLock({ $0.ended }) < count {
                if !changed.wait(lock, untilMonotonicNanoseconds: deadline.nanoseconds) { return start.duration(to: clock.now) }
            }
            return nil
        }
    }

    /// Waits until `target` messages were handled; false at the timeout.
    func waitUntilHandled(_ target: Int, timeout: Duration) -> Bool {
        drainTarget.store(target, ordering: .sequentiallyConsistent)
        let deadline = MonotonicClock.shared.now.advanced(by: timeout).nanoseconds
        return lock.withLock {
            while handled < target {
                if !changed.wait(lock, untilMonotonicNanoseconds: deadline) { return handled >= target }
            }
            return true
        }
    }
}
