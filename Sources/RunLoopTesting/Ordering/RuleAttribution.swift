import RunLoopKit

/// Walks a trace in order and says, for each step, which rule of `Docs/Rules.md` placed it there.
///
/// The attribution follows the pass of `Loop+Run.swift` step by step (L3):
/// - Entry and Exit frame a run (R5); Exit is the end of a run decided by the exit checks (L-e),
///   whose result is read from the run's end entry further on.
/// - BeforeTimers and BeforeSources open every pass (L3).
/// - Blocks and executor jobs run after BeforeSources, after sources0 and at the end of the pass
///   (B3); signalled sources0 run after the first blocks, ordered by `order` (S2).
/// - BeforeWaiting and AfterWaiting appear only in a pass that waits (L-a).
/// - After the wait one cause is handled (L-c): due timers, all in one pass (L-b for the first,
///   T4 for the ones after it), a port or fd source (S8), or the loop's queue (X4). Queue work
///   that runs in a pass without AfterWaiting took the fast path before BeforeWaiting (L-a).
/// - Observers run in ascending order for the activity just notified (O1); the commit observer is
///   the one at order 2000000 (TX6).
/// - A commit lays out shallow layers first, each once (TX3), again when re-dirtied during layout
///   (TX4), displays after all layout (TX2), and was triggered by: the BeforeWaiting or Exit
///   observer (TX6), flush-if-too-late after a source0 (TX13), `flush()` (TX10), or the outermost
///   explicit `commit()` (TX8).
/// - A log line or mark belongs to the innermost callout running when it was written.
struct RuleAttribution {
    private let entries: [TraceEntry]
    /// For each Exit entry, the result of its run (the `runEnd` that follows on its thread).
    private var exitResults: [Int: Loop.RunResult] = [:]
    private var threads: [Int: ThreadState] = [:]

    /// What the walk knows about one recorder thread.
    private struct ThreadState {
        var pass: UInt64?
        var waitedThisPass = false
        /// Whether the pass before this one waited (BeforeWaiting … AfterWaiting).
        var previousPassWaited = false
        /// The first pass of the run in progress (set at Entry).
        var runFirstPass: UInt64?
        var timersThisPass = 0
        var lastActivity: Loop.Activity?
        /// Open callouts, innermost last, with the rule that placed each.
        var callouts: [(kind: LoopEvent.Callout, label: String, step: LoopStep, rule: LoopRuleCitation)] = []
    }

    init(_ entries: [TraceEntry]) {
        self.entries = entries
        var pendingEnd: [Int: Loop.RunResult] = [:]
        for index in entries.indices.reversed() {
            let entry = entries[index]
            switch entry.kind {
            case .runEnd(let result): pendingEnd[entry.thread] = result
            case .activity(let activity) where activity == .exit: exitResults[index] = pendingEnd[entry.thread]
            default: break
            }
        }
    }

    /// The steps `entry` (at `index` of the trace) gives, with their rules; most entries give
    /// one step or none, a commit gives one per layer and phase plus `commit`.
    mutating func place(_ entry: TraceEntry, at index: Int) -> [LoopStepPlacement] {
        var state = threads[entry.thread] ?? ThreadState()
        defer { threads[entry.thread] = state }
        if state.pass != entry.pass {
            state.pass = entry.pass
            state.previousPassWaited = state.waitedThisPass
            state.waitedThisPass = false
            state.timersThisPass = 0
        }
        func placed(_ step: LoopStep, _ rule: LoopRuleCitation, pass: UInt64 = entry.pass) -> LoopStepPlacement {
            LoopStepPlacement(step: step, pass: pass, time: entry.time, rule: rule, sequence: entry.sequence)
        }

        switch entry.kind {
        case .activity(let activity):
            state.lastActivity = activity
            if activity == .afterWaiting { state.waitedThisPass = true }
            // Entry comes before the run's first pass, which has not been counted yet.
            let pass = activity == .entry ? entry.pass + 1 : entry.pass
            if activity == .entry { state.runFirstPass = pass }
            let rule = activity == .beforeTimers
                ? Self.ruleForPassStart(entry.pass, state: state)
                : Self.rule(for: activity, result: exitResults[index])
            return [placed(.activity(activity), rule, pass: pass)]

        case .calloutBegin(let kind):
            if kind == .timer { state.timersThisPass += 1 }
            let step = LoopStep.callout(kind, label: entry.label)
            let rule = Self.rule(forCallout: kind, label: entry.label, state: state)
            state.callouts.append((kind, entry.label, step, rule))
            return [placed(step, rule)]

        case .calloutEnd(let kind):
            if let open = state.callouts.lastIndex(where: { $0.kind == kind && $0.label == entry.label }) {
                state.callouts.removeSubrange(open...)
            }
            return []

        case .commit(let record):
            return Self.steps(of: record).map { placed($0.step, $0.rule) }

        case .log:
            return [placed(.log(entry.label), Self.rule(writtenIn: state))]

        case .mark:
            return [placed(.mark(entry.label), Self.rule(writtenIn: state))]

        case .sleep, .wake, .runBegin, .runEnd, .pool, .memory, .lag:
            return []
        }
    }

    // MARK: The rules

    static func rule(for activity: Loop.Activity, result: Loop.RunResult?) -> LoopRuleCitation {
        switch activity {
        case .entry:
            LoopRuleCitation(id: "R5", reason: "a run notifies Entry once, before its first pass")
        case .beforeTimers, .beforeSources:
            LoopRuleCitation(id: "L3", reason: "every pass notifies BeforeSources right after BeforeTimers")
        case .beforeWaiting:
            LoopRuleCitation(id: "L-a", reason: "the pass handled no source0 and has time left, so it is about to wait")
        case .afterWaiting:
            LoopRuleCitation(id: "L-a", reason: "the wait of this pass ended; AfterWaiting follows BeforeWaiting in the same pass")
        case .exit:
            LoopRuleCitation(id: "L-e", reason: "an exit check ended the run: " + exitReason(result))
        default:
            LoopRuleCitation(id: "L3", reason: "an activity of the pass")
        }
    }

    /// BeforeTimers opens a pass (L3); after a pass that did not wait the next one follows at
    /// once (L-a), which is where an unexpected second BeforeTimers usually comes from.
    private static func ruleForPassStart(_ pass: UInt64, state: ThreadState) -> LoopRuleCitation {
        if state.runFirstPass == pass || state.runFirstPass == nil {
            return LoopRuleCitation(id: "L3", reason: "the run's first pass begins with BeforeTimers, then BeforeSources")
        }
        if state.previousPassWaited {
            return LoopRuleCitation(id: "L3", reason: "pass \(pass - 1) waited and ended; pass \(pass) begins with BeforeTimers")
        }
        return LoopRuleCitation(id: "L-a", reason: "pass \(pass - 1) did not wait (it handled a source0 or queued work, "
                                + "or the run polls), so pass \(pass) began at once")
    }

    static func exitReason(_ result: Loop.RunResult?) -> String {
        switch result {
        case .timedOut: "its deadline had passed"
        case .stopped: "it was stopped"
        case .handledSource: "it handled a source and was to return after one"
        case .finished: "its mode had nothing left"
        case nil: "the run ended"
        }
    }

    private static func rule(forCallout kind: LoopEvent.Callout, label: String, state: ThreadState) -> LoopRuleCitation {
        switch kind {
        case .source0:
            return LoopRuleCitation(id: "S2", reason: "signalled sources0 run after BeforeSources and the first blocks, by order")
        case .source1:
            return LoopRuleCitation(id: "S8", reason: "a port is served after the wait its descriptor ended, one message per pass")
        case .fileSource:
            return LoopRuleCitation(id: "S8", reason: "an fd source is served after the wait its descriptor ended")
        case .timer:
            if state.timersThisPass > 1 {
                return LoopRuleCitation(id: "T4", reason: "every due timer fires in the same pass, in fire-date order")
            }
            return LoopRuleCitation(id: "L-b", reason: "timers fire only after a wait ended with their deadline due")
        case .block:
            return LoopRuleCitation(id: "B3", reason: "blocks run after BeforeSources, after sources0 and at the end of the pass")
        case .job:
            return LoopRuleCitation(id: "B3", reason: "executor jobs run where blocks run")
        case .mainQueue:
            if state.waitedThisPass {
                return LoopRuleCitation(id: "X4", reason: "the queue's descriptor ended the wait; one drain runs what was queued")
            }
            return LoopRuleCitation(id: "L-a", reason: "queued work found after sources0 runs at once, and the pass skips BeforeWaiting")
        case .observer:
            let activity = state.lastActivity.map(LoopStepName.activity) ?? "the activity"
            if label == ObserverLabel.commit {
                return LoopRuleCitation(id: "TX6", reason: "the commit observer runs at \(activity), order 2000000")
            }
            return LoopRuleCitation(id: "O1", reason: "observers of \(activity) run in ascending order")
        }
    }

    private static func rule(writtenIn state: ThreadState) -> LoopRuleCitation {
        guard let innermost = state.callouts.last else {
            return LoopRuleCitation(id: nil, reason: "written by the test outside the loop's callouts")
        }
        return LoopRuleCitation(id: innermost.rule.id, reason: "written inside \(innermost.step), which ran there: \(innermost.rule.reason)")
    }

    /// A commit as steps: its layouts, its displays, then `commit`.
    static func steps(of record: CommitRecord) -> [(step: LoopStep, rule: LoopRuleCitation)] {
        let frame = "commit #\(record.frame)"
        var steps: [(step: LoopStep, rule: LoopRuleCitation)] = []
        var laidOut: Set<String> = []
        for phase in record.phases {
            for layer in phase.layers {
                switch phase.name {
                case "layout":
                    if laidOut.insert(layer).inserted {
                        steps.append((.layout(layer), LoopRuleCitation(id: "TX3", reason: "\(frame) lays out shallow layers first, each once")))
                    } else {
                        steps.append((.layout(layer), LoopRuleCitation(id: "TX4", reason: "re-dirtied during layout, laid out again in \(frame)")))
                    }
                case "display":
                    steps.append((.display(layer), LoopRuleCitation(id: "TX2", reason: "\(frame) displays only after all of its layout")))
                default:
                    break   // "deferred": left for the next commit, not done here
                }
            }
        }
        steps.append((.commit, commitRule(record)))
        return steps
    }

    private static func commitRule(_ record: CommitRecord) -> LoopRuleCitation {
        switch record.reason {
        case CommitReason.beforeWaiting.description:
            LoopRuleCitation(id: "TX6", reason: "the commit observer at order 2000000 committed at BeforeWaiting")
        case CommitReason.exit.description:
            LoopRuleCitation(id: "TX6", reason: "the commit observer at order 2000000 committed at Exit")
        case CommitReason.tooLate.description:
            LoopRuleCitation(id: "TX13", reason: "a source0 callout ended with marks older than the flush budget")
        case CommitReason.flush.description:
            LoopRuleCitation(id: "TX10", reason: "flush() committed the implicit transaction")
        case CommitReason.explicitCommit.description:
            LoopRuleCitation(id: "TX8", reason: "the outermost explicit commit() committed")
        default:
            LoopRuleCitation(id: "TX1", reason: "the marks made since the last commit were committed together (\(record.reason))")
        }
    }
}
