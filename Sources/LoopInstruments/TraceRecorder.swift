import PThreads
import RunLoopCore

/// Records everything a loop reports (activities, callouts, sleeps, runs) plus what the loop
/// cannot see: pool pushes and pops, commits, marks, memory samples, lag reports and user log
/// lines. Thread-safe; bounded (the oldest entries are overwritten once `capacity` is reached).
///
/// ```swift
/// let clock = VirtualClock()
/// let loop = Loop(clock: clock)
/// let recorder = TraceRecorder()
/// recorder.attach(to: loop)                     // becomes loop.eventSink, adopts loop.clock
/// loop.perform { recorder.log("reloadData") }
/// loop.run(mode: .default, timeout: 0)
/// print(recorder.text(.seed))                   // kCFRunLoopBeforeTimers … reloadData …
/// ```
public final class TraceRecorder: LoopEventSink, Sendable {
    /// Everything that changes, behind one lock.
    private let state: Locked<State>

    private struct State {
        var buffer: RingBuffer<TraceEntry>
        var nextSequence: UInt64 = 0
        var clock: (any LoopClock)?
        var threads: [UInt: ThreadContext] = [:]
        /// Bounded like the entries: the oldest inputs are overwritten once `capacity` is reached.
        var recordedInputs: RingBuffer<TraceInput>

        /// The context of the thread `key`, numbered on first sight.
        mutating func threadContext(_ key: UInt) -> ThreadContext {
            if let context = threads[key] { return context }
            let context = ThreadContext(number: threads.count + 1)
            threads[key] = context
            return context
        }

        mutating func append(_ kind: TraceEntry.Kind, label: String, context: ThreadContext, time: LoopInstant) {
            buffer.append(TraceEntry(sequence: nextSequence, kind: kind, label: label, mode: context.mode,
                                     pass: context.pass, time: time, thread: context.number))
            nextSequence += 1
        }
    }

    /// What the recorder last saw on one thread, used to stamp entries the loop did not emit.
    private struct ThreadContext {
        let number: Int
        var mode: Loop.Mode?
        var pass: UInt64 = 0
    }

    /// - Parameters:
    ///   - clock: the clock that stamps entries the loop did not emit (logs, marks, pool,
    ///     commits). Pass the loop's clock, or let `attach(to:)` adopt it.
    ///     Defaults to `MonotonicClock.shared` when neither is given.
    ///   - capacity: the most entries kept; older ones are overwritten.
    public init(clock: (any LoopClock)? = nil, capacity: Int = 100_000) {
        precondition(capacity > 0, "TraceRecorder capacity must be positive, got \(capacity)")
        self.capacity = capacity
        state = Locked(State(buffer: RingBuffer(capacity: capacity), clock: clock,
                             recordedInputs: RingBuffer(capacity: capacity)))
    }

    /// Installs the recorder as `loop.eventSink` and adopts `loop.clock` if no clock was given.
    /// To combine it with other sinks use `LoopEventFanout`.
    public func attach(to loop: Loop) {
        state.withLock { if $0.clock == nil { $0.clock = loop.clock } }
        loop.eventSink = self
    }

    /// The label of the observer `observeActivities(on:)` adds; its callouts are not recorded.
    public static let activityObserverLabel = "TraceRecorder.activities"

    /// Adds an observer for every activity that does nothing, because a loop only notifies
    /// (and so only emits) activities that some observer of the running mode asks for — as
    /// CF does. Its own callouts are left out of the trace. Returns the observer so it can be
    /// removed.
    ///
    /// ```swift
    /// recorder.attach(to: loop)
    /// recorder.observeActivities(on: loop)      // BT, BS, AW … appear even with no other observer
    /// ```
    @discardableResult
    public func observeActivities(on loop: Loop, mode: Loop.Mode = .common) -> LoopObserver {
        let observer = LoopObserver(activities: .allActivities, order: Int.min, label: Self.activityObserverLabel) { _, _ in }
        loop.add(observer, mode: mode)
        return observer
    }

    /// Uses `clock` to stamp entries the loop did not emit.
    public func use(clock: any LoopClock) {
        state.withLock { $0.clock = clock }
    }

    // MARK: LoopEventSink

    public func loop(_ loop: Loop, emitted event: LoopEvent) {
        record(event)
    }

    /// Records one loop event (what `loop(_:emitted:)` does).
    public func record(_ event: LoopEvent) {
        let kind: TraceEntry.Kind
        switch event.kind {
        case .activity(let activity): kind = .activity(activity)
        case .calloutBegin(let callout):
            if callout == .observer && event.label == Self.activityObserverLabel { return }
            kind = .calloutBegin(callout)
        case .calloutEnd(let callout):
            if callout == .observer && event.label == Self.activityObserverLabel { return }
            kind = .calloutEnd(callout)
        case .sleep: kind = .sleep
        case .wake: kind = .wake
        case .runBegin: kind = .runBegin
        case .runEnd(let result): kind = .runEnd(result)
        // Inputs come from any thread: kept apart, so entries and exports are unchanged.
        case .input:
            state.withLock { $0.recordedInputs.append(TraceInput(after: Int($0.nextSequence), event: event)) }
            return
        }
        let key = currentThreadKey()
        state.withLock { state in
            var context = state.threadContext(key)
            if context.pass != event.pass || context.mode != event.mode {
                context.mode = event.mode
                context.pass = event.pass
                state.threads[key] = context
            }
            state.append(kind, label: event.label, context: context, time: event.time)
        }
    }

    // MARK: Events the loop cannot see

    /// Records a free-form log line (shown verbatim in the text log, like `NSLog`).
    public func log(_ text: String) { recordOther(.log, label: text) }

    /// Records a named point in time (e.g. a layer being marked dirty).
    public func mark(_ name: String) { recordOther(.mark, label: name) }

    /// Records an autorelease pool operation.
    public func record(_ pool: PoolRecord, label: String = "pool") { recordOther(.pool(pool), label: label) }

    /// Records a commit (feed it from a Transactions `CommitSink`).
    public func record(_ commit: CommitRecord, label: String = "commit") { recordOther(.commit(commit), label: label) }

    /// Records a memory sample (a `MemoryProbe` with a recorder does this itself).
    public func record(_ sample: MemorySample) {
        recordAt(.memory(sample), label: sample.label, time: sample.time)
    }

    /// Records a lag report (a `LagMonitor` with a recorder does this itself).
    public func record(_ report: LagReport) {
        recordAt(.lag(report), label: report.calloutLabel ?? "", time: report.detectedAt)
    }

    private func recordOther(_ kind: TraceEntry.Kind, label: String) {
        recordAt(kind, label: label, time: nil)
    }

    private func recordAt(_ kind: TraceEntry.Kind, label: String, time: LoopInstant?) {
        let key = currentThreadKey()
        state.withLock { state in
            let context = state.threadContext(key)
            let stamp = time ?? (state.clock ?? MonotonicClock.shared).now
            state.append(kind, label: label, context: context, time: stamp)
        }
    }

    // MARK: Reading

    /// The kept entries, oldest first.
    public var entries: [TraceEntry] { state.withLock { $0.buffer.elements } }

    /// The inputs the loop reported (signals, sends, wake-ups), oldest first; not among
    /// ``entries``, so no export shows them. Each knows how many entries came before it.
    public var inputs: [TraceInput] { state.withLock { $0.recordedInputs.elements } }

    /// Number of kept entries.
    public var count: Int { state.withLock { $0.buffer.count } }

    /// Entries overwritten because the recorder was full.
    public var droppedCount: UInt64 { state.withLock { $0.buffer.overwritten } }

    /// The most entries kept.
    public let capacity: Int

    /// Forgets every entry (sequence numbers keep counting).
    public func clear() { state.withLock { $0.buffer.removeAll() } }
}
