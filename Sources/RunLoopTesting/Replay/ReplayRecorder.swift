import RunLoopCore
import RunLoopKit
import PThreads

/// Records a loop on a `VirtualClock` for replay: every loop event (through a `TraceRecorder`)
/// and every input: the signals, port sends and wake-ups the loop reports
/// (`LoopEvent.Kind.input`), however they were made, and the fd readiness and clock advances
/// made through the recorder.
///
/// An input made on the loop's thread is marked `from=loop`; one made on another thread (while
/// the loop waits) is marked `from=external`, and a replay applies it itself at the same pass.
///
/// ```swift
/// let clock = VirtualClock()
/// let loop = Loop(clock: clock)
/// let recorder = ReplayRecorder(loop: loop, clock: clock)
/// let source = LoopSource(label: "s0") { print("performed") }
/// loop.add(source, mode: .default)
/// recorder.signal(source)
/// loop.run(mode: .default, timeout: 0)            // performed
/// let trace = try recorder.trace()
/// print(trace.entries.contains { $0.kind == .calloutBegin(.source0, label: "s0") })   // true
/// ```
public final class ReplayRecorder: Sendable {
    /// The loop being recorded.
    public let loop: Loop
    /// Its clock.
    public let clock: VirtualClock
    /// The loop events, as any `TraceRecorder` keeps them.
    public let events: TraceRecorder
    /// True while a ``TraceReplay/replay(_:observeActivities:stallLimit:workload:)`` runs the workload: inputs marked
    /// `from=external` are applied by the replay, so the workload must not make them again.
    public let isReplaying: Bool

    /// The clock's reading when the recorder attached: where a replay's clock starts.
    public let clockStart: LoopInstant
    private let state: Locked<State>

    private struct State {
        var inputs: [(after: Int, input: ReplayInput, time: LoopInstant)] = []
        var sources: [String: LoopSource] = [:]
        var ports: [String: LoopPortSource] = [:]
        /// The blocks of `perform` inputs, by input label (`registerBlock`).
        var blocks: [String: (calloutLabel: String, work: @Sendable () -> Void)] = [:]
        /// While the loop is in a wait: the position right after its `sleep` entry.
        var sleepPosition: Int?
        /// External inputs made while the loop was not (yet) in a wait: they belong to the next one.
        var awaitingSleep: [(input: ReplayInput, time: LoopInstant)] = []
        /// Replay only: the external inputs still to apply, by the pass whose wait they arrived in.
        var externalByPass: [UInt64: [ReplayInput]] = [:]
        var replayProblems: [String] = []
        /// Replay only: the recorder is applying recorded external inputs, which it records itself.
        var applyingExternal = false
    }

    /// Attaches to `loop`: a `TraceRecorder` joins its event sink (beside any sink already set).
    ///
    /// - Parameters:
    ///   - loop: a loop on `clock`, not running, on the calling thread.
    ///   - clock: the loop's virtual clock; its reading now is the trace's ``clockStart``.
    ///   - observeActivities: adds an observer for every activity (in the common modes) so that
    ///     each activity appears in the trace; its own callouts are left out.
    ///   - capacity: the most loop events kept; ``trace()`` throws when more were made.
    public convenience init(loop: Loop, clock: VirtualClock, observeActivities: Bool = false, capacity: Int = 1_000_000) {
        self.init(loop: loop, clock: clock, observeActivities: observeActivities, capacity: capacity, replaying: nil)
    }

    init(loop: Loop, clock: VirtualClock, observeActivities: Bool, capacity: Int, replaying expected: ReplayTrace?) {
        self.loop = loop
        self.clock = clock
        clockStart = clock.now
        events = TraceRecorder(clock: clock, capacity: capacity)
        isReplaying = expected != nil
        var initial = State()
        for entry in expected?.entries ?? [] {
            if case .input(let input) = entry.kind, input.origin == .external {
                initial.externalByPass[entry.pass, default: []].append(input)
            }
        }
        state = Locked(initial)
        // The wait tracker comes after `events`, so a wait's `sleep` entry is recorded when it runs.
        let sinks: [any LoopEventSink] = [loop.eventSink, events, WaitTracker(self)].compactMap { $0 }
        loop.eventSink = LoopEventFanout(sinks)
        if observeActivities { events.observeActivities(on: loop) }
    }

    // MARK: Inputs

    /// Makes `source` known by its label, so a replay can signal it for an external input.
    public func register(_ source: LoopSource) { state.withLock { $0.sources[source.label] = source } }

    /// Makes `port` known by its label, so a replay can send to it for an external input.
    public func register(_ port: LoopPortSource) { state.withLock { $0.ports[port.label] = port } }

    /// Makes `work` the block of the input `label`: ``performAndWake(_:)`` enqueues it, and a
    /// replay enqueues it for a recorded `perform` of that label (a file holds the label, never
    /// the closure). Register it in the workload before the loop runs, recording and replaying.
    public func registerBlock(_ label: String, calloutLabel: String = "block", _ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.blocks[label] = (calloutLabel, work) }
    }

    /// Enqueues the block registered under `label` in the default mode and wakes the loop, as
    /// `loop.performAndWake` does, recording a `perform` input (from another thread: `external`,
    /// re-applied by a replay at the same wait) and the wake-up. Returns false, recording
    /// nothing, when no block is registered under `label`; false when the loop refused it.
    @discardableResult
    public func performAndWake(_ label: String) -> Bool {
        guard let block = state.withLock({ $0.blocks[label] }) else { return false }
        record(.perform(label: label))
        return loop.performAndWake(label: block.calloutLabel, block.work)
    }

    /// Registers and signals `source` (S1). A plain `source.signal()` is recorded as well; this
    /// also makes the source known to a replay.
    public func signal(_ source: LoopSource) {
        register(source)
        source.signal()
    }

    /// Registers `port` and sends `bytes` to it; the send is recorded with the bytes as its
    /// payload identity, as a plain `port.send(bytes)` is.
    public func send(_ bytes: [UInt8], to port: LoopPortSource) throws(LoopPortSource.SendError) {
        register(port)
        try port.send(bytes)
    }

    /// Wakes the loop (W3), as `loop.wakeUp()` does; both are recorded.
    public func wakeUp() {
        loop.wakeUp()
    }

    /// Moves the virtual clock forward and records it; a negative duration throws and records nothing.
    public func advance(by duration: Duration) throws(LoopError) {
        guard duration >= .zero else { throw LoopError.negativeDuration(duration, what: "ReplayRecorder.advance(by:)") }
        record(.advance(nanoseconds: Nanoseconds.from(duration)))
        try clock.advance(by: duration)
    }

    /// Records that `file`'s descriptor was made ready for `events`, then calls `makeReady`
    /// (which writes to the descriptor). A replay cannot make a descriptor ready by itself, so
    /// fd readiness is checked only when it comes from the loop's thread.
    public func fileReady(_ file: LoopFileSource, events: LoopFileSource.Events, makeReady: () -> Void) {
        record(.fileReady(label: file.label, events: events.rawValue))
        makeReady()
    }

    /// Records an input where it happened. One from another thread belongs to a wait of the loop:
    /// the one in progress (even if the loop is already waking), or else the next one. The loop
    /// reports itself waiting (`waitUntilWaiting`) just before it emits `sleep`, so an input made
    /// in that gap still lands after the `sleep` entry, where a replay re-applies it.
    private func record(_ action: ReplayInput.Action) {
        record(ReplayInput(action, origin: loop.isOwnerThread ? .loop : .external), time: clock.now)
    }

    /// An input the loop reported, on the thread that made it, before it took effect.
    fileprivate func loopReported(_ event: LoopEvent) {
        guard let input = ReplayInput(reported: event), !state.withLock({ $0.applyingExternal }) else { return }
        record(input, time: event.time)
    }

    private func record(_ input: ReplayInput, time: LoopInstant) {
        let position = recordedCount
        state.withLock { state in
            switch input.origin {
            case .loop: state.inputs.append((position, input, time))
            case .external:
                if let sleep = state.sleepPosition {
                    state.inputs.append((sleep, input, time))
                } else {
                    state.awaitingSleep.append((input, time))
                }
            }
        }
    }

    /// Loop events recorded so far, dropped ones included.
    private var recordedCount: Int { events.count + Int(events.droppedCount) }

    /// The loop is about to wait in `pass` (its `sleep` entry is recorded): anchors the external
    /// inputs made meanwhile, and in a replay applies those recorded for this wait.
    fileprivate func loopWillWait(pass: UInt64) {
        let position = recordedCount
        state.withLock { state in
            state.sleepPosition = position
            for waiting in state.awaitingSleep { state.inputs.append((position, waiting.input, waiting.time)) }
            state.awaitingSleep.removeAll()
        }
        if isReplaying { applyExternalInputs(pass: pass) }
    }

    fileprivate func loopDidWake() { state.withLock { $0.sleepPosition = nil } }

    static func payload(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return "bytes:" + String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    // MARK: Replay of external inputs

    /// Replay only: applies the external inputs recorded in the wait of `pass`, just before the
    /// wait starts, recording each as the recording had it.
    private func applyExternalInputs(pass: UInt64) {
        let due = state.withLock { $0.externalByPass.removeValue(forKey: pass) } ?? []
        state.withLock { $0.applyingExternal = true }
        defer { state.withLock { $0.applyingExternal = false } }
        for input in due {
            let time = clock.now
            state.withLock { $0.inputs.append(($0.sleepPosition ?? recordedCount, input, time)) }
            switch input.action {
            case .signal(let label):
                if let source = state.withLock({ $0.sources[label] }) { source.signal() } else {
                    problem("an external signal names source \"\(label)\", which the workload did not register")
                }
            case .send(let label, let payload):
                guard let port = state.withLock({ $0.ports[label] }) else {
                    problem("an external send names port \"\(label)\", which the workload did not register")
                    continue
                }
                guard let bytes = Self.bytes(payload) else {
                    problem("an external send to \"\(label)\" has payload \"\(payload)\", which a replay cannot rebuild")
                    continue
                }
                do { try port.send(bytes) } catch { problem("re-sending to \"\(label)\" failed: \(error)") }
            case .wakeUp: loop.wakeUp()
            case .advance(let nanoseconds): clock.advance(to: clock.now.advanced(by: .nanoseconds(Int64(clamping: nanoseconds))))
            case .fileReady(let label, _):
                problem("an external fd readiness of \"\(label)\" cannot be re-applied: the replay owns no descriptor")
            case .perform(let label):
                guard let block = state.withLock({ $0.blocks[label] }) else {
                    problem("an external block names \"\(label)\", which the workload did not register (registerBlock)")
                    continue
                }
                if !loop.perform(label: block.calloutLabel, block.work) { problem("the loop refused the block \"\(label)\"") }
            }
        }
    }

    func problem(_ text: String) { state.withLock { $0.replayProblems.append(text) } }

    static func bytes(_ payload: String) -> [UInt8]? {
        guard payload.hasPrefix("bytes:") else { return nil }
        let hex = Array(payload.dropFirst(6).utf8)
        guard hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let byte = UInt8(String(decoding: hex[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// External inputs a replay could not apply, and those never reached (their pass did not wait).
    var replayProblems: [String] {
        state.withLock { state in
            state.replayProblems + state.externalByPass.keys.sorted().map { "the external inputs of pass \($0) were never applied: that pass did not wait" }
        }
    }

    // MARK: Reading

    /// The trace so far. Throws when the recorder dropped loop events (raise `capacity`).
    public func trace() throws(ReplayRecorderError) -> ReplayTrace {
        let entries = events.entries
        let dropped = events.droppedCount
        guard dropped == 0 else { throw ReplayRecorderError.eventsDropped(dropped, capacity: events.capacity) }
        let inputs = state.withLock { state in
            // External inputs made after the last wait began stay at the end, in order.
            state.inputs + state.awaitingSleep.map { (Int.max, $0.input, $0.time) }
        }
        // Stable: inputs anchored to one wait keep the order they were made in.
        let ordered = inputs.enumerated().sorted { ($0.element.after, $0.offset) < ($1.element.after, $1.offset) }.map(\.element)
        return ReplayTrace(events: entries, inputs: ordered, clockStart: clockStart)
    }
}

/// Why a ``ReplayRecorder`` could not give a complete trace.
public enum ReplayRecorderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The loop made more events than the recorder keeps.
    case eventsDropped(UInt64, capacity: Int)
    /// The loop was stopped because it was still running after the stall limit (the reason).
    case stalled(String)

    public var description: String {
        switch self {
        case .eventsDropped(let count, let capacity):
            return "the recorder dropped \(count) loop events (capacity \(capacity)); record with a larger capacity"
        case .stalled(let reason): return reason
        }
    }
}

/// Tells the recorder when the loop begins and ends a wait (external inputs belong to a wait)
/// and which inputs it reported.
private final class WaitTracker: LoopEventSink {
    // Weak: the loop holds this sink and the recorder holds the loop.
    weak let recorder: ReplayRecorder?
    init(_ recorder: ReplayRecorder) { self.recorder = recorder }

    func loop(_ loop: Loop, emitted event: LoopEvent) {
        switch event.kind {
        case .sleep: recorder?.loopWillWait(pass: event.pass)
        case .wake: recorder?.loopDidWake()
        case .input: recorder?.loopReported(event)
        default: break
        }
    }
}
