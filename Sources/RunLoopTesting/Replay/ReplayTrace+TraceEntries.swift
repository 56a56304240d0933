import RunLoopKit

extension ReplayTrace {
    /// A trace made from what a `TraceRecorder` kept, with `inputs` placed among the entries.
    ///
    /// Memory samples are left out: they measure the process, not the loop, and differ from
    /// one run to the next. Pool records keep their operation only, for the same reason.
    ///
    /// - Parameters:
    ///   - events: a recorder's entries, oldest first.
    ///   - inputs: each input with the number of recorder entries made before it, in that order.
    ///   - clockStart: the clock reading the loop started from.
    ///
    /// ```swift
    /// let trace = ReplayTrace(events: recorder.entries, clockStart: .zero)
    /// ```
    public init(events: [TraceEntry], inputs: [(after: Int, input: ReplayInput, time: LoopInstant)] = [],
                clockStart: LoopInstant) {
        var entries: [ReplayTraceEntry] = []
        entries.reserveCapacity(events.count + inputs.count)
        var pending = inputs[...]
        var context = (pass: UInt64(0), mode: "")
        func flushInputs(upTo position: Int) {
            while let next = pending.first, next.after <= position {
                entries.append(ReplayTraceEntry(.input(next.input), pass: context.pass, mode: context.mode, time: next.time))
                pending.removeFirst()
            }
        }
        for (position, event) in events.enumerated() {
            flushInputs(upTo: position)
            guard let kind = Self.kind(of: event) else { continue }
            context = (event.pass, event.mode?.name ?? "")
            entries.append(ReplayTraceEntry(kind, pass: event.pass, mode: context.mode, time: event.time))
        }
        flushInputs(upTo: Int.max)
        self.init(clockStart: clockStart, entries: entries)
    }

    /// A trace made from a `TraceRecorder`'s entries and the inputs it saw (`recorder.inputs`),
    /// each input placed where the loop reported it.
    ///
    /// ```swift
    /// let trace = ReplayTrace(events: recorder.entries, inputs: recorder.inputs, clockStart: .zero)
    /// ```
    public init(events: [TraceEntry], inputs: [TraceInput], clockStart: LoopInstant) {
        let first = Int(events.first?.sequence ?? 0)
        let placed = inputs.compactMap { input in
            ReplayInput(reported: input.event).map { (max(0, input.after - first), $0, input.event.time) }
        }
        self.init(events: events, inputs: placed, clockStart: clockStart)
    }

    /// A trace made from a `TraceRecorder`'s entries, the inputs it saw, and the inputs other
    /// threads gave the loop that the recorder cannot see (blocks they enqueued), each with the
    /// number of recorder entries made before it.
    ///
    /// Every input from another thread (`external`, from either list) is written where a replay
    /// re-applies it: right after the `sleep` of the wait it arrived in, or, when the loop was
    /// not waiting, right after the next `sleep` or `run-begin`. Inputs that land on the same
    /// line keep the order they were made in (`external` before `inputs` at the same position).
    ///
    /// ```swift
    /// let trace = ReplayTrace(events: recorder.entries, inputs: recorder.inputs,
    ///                         external: [(after: 3, input: ReplayInput(.perform(label: "reply"), origin: .external), time: .zero)],
    ///                         clockStart: .zero)
    /// ```
    public init(events: [TraceEntry], inputs: [TraceInput],
                external: [(after: Int, input: ReplayInput, time: LoopInstant)], clockStart: LoopInstant) {
        let first = Int(events.first?.sequence ?? 0)
        let reported = inputs.compactMap { input in
            ReplayInput(reported: input.event).map { (after: max(0, input.after - first), input: $0, time: input.event.time) }
        }
        // Stable: same position, `external` first (a block is recorded before its wake-up is reported).
        let merged = (external + reported).enumerated().map { offset, input in
            (key: (Self.anchor(input.after, external: input.input.origin == .external, in: events), offset), input)
        }.sorted { $0.key < $1.key }.map { (after: $0.key.0, input: $0.1.input, time: $0.1.time) }
        self.init(events: events, inputs: merged, clockStart: clockStart)
    }

    /// Where an input made after `after` entries is written. One from another thread goes after
    /// the `sleep` or `run-begin` that precedes the loop's next look at its inputs.
    static func anchor(_ after: Int, external: Bool, in events: [TraceEntry]) -> Int {
        guard external else { return after }
        func opensWait(_ index: Int) -> Bool {
            switch events[index].kind {
            case .sleep, .runBegin: return true
            default: return false
            }
        }
        if after > 0 && after <= events.count && opensWait(after - 1) { return after }
        var index = after
        while index < events.count && !opensWait(index) { index += 1 }
        return min(index + 1, events.count)
    }

    private static func kind(of event: TraceEntry) -> ReplayTraceEntry.Kind? {
        switch event.kind {
        case .activity(let activity): return .activity(activity.shortName)
        case .calloutBegin(let callout): return .calloutBegin(callout, label: event.label)
        case .calloutEnd(let callout): return .calloutEnd(callout, label: event.label)
        case .sleep: return .sleep
        case .wake: return .wake
        case .runBegin: return .runBegin
        case .runEnd(let result): return .runEnd(result: "\(result)")
        case .pool(let record): return .pool(operation: record.operation.rawValue)
        case .commit(let record): return .commit(frame: record.frame, reason: record.reason)
        case .mark: return .mark(event.label)
        case .log: return .log(event.label)
        case .memory: return nil
        case .lag: return .lag(label: event.label)
        }
    }
}
