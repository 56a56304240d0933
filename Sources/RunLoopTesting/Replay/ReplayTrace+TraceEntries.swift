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
