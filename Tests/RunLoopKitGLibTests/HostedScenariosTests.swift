import LoopInstruments
import LoopScenarios
import PThreads
import RunLoopCore
import Testing
@testable import RunLoopKitGLib

/// Every scenario of the main job — the seeds' code 1 (from a source0 and from a button) and
/// code 2, and the documented scenarios — run twice: natively, and with each of its loop runs
/// hosted in GLib (`GLibMainContext.run`: GLib's iteration does the waiting, the loop's passes
/// run in it, H1–H4). The two results must be the same: the compared lines, the checks, and the
/// whole trace the scenario recorded (every activity, callout, sleep, wake, pool operation,
/// commit, memory sample and lag report, with its pass, mode and time), and the inputs.
///
/// Declared (Docs/Hosting.md, "Declared differences"; anything else fails):
/// - a run inside a callout of a hosted run is the loop's own (a thread hosts one loop run in
///   GLib at a time): perform-in-default-mode's tracking run inside its touch handler;
/// - the two scenarios on the real clock (their other threads give the loop work) are compared
///   without the times, and without where among the loop's entries another thread's input
///   landed (its thread sees the loop waiting, then records; the loop records its sleep after
///   it begins to wait): both differ from one native run to the next as well;
/// - memory samples are compared without the process's resident and heap bytes, readings of the
///   whole process that differ from one native run to the next as well;
/// - memory-peak-attribution's turn peaks include what GLib's iteration allocates on the loop's
///   thread between callouts (the check still holds: under one page).
@Suite("Hosted scenarios: the same trace hosted in GLib as run natively")
struct HostedScenariosTests {
    /// Runs each loop run of a scenario inside GLib: a new `GMainContext` per run, iterated on
    /// the loop's thread (every scenario runs its loops on their own threads, so each of them is
    /// hosted, the resident thread's and the second measurement threads' included). A run that
    /// begins inside a callout of a hosted run — the thread is hosting already — is the loop's
    /// own run, and is counted.
    final class GLibScenarioRunner: Sendable {
        struct Counts: Sendable {
            var hosted = 0
            var nested = 0
            /// GLib iterations the hosted runs took.
            var iterations = 0
            /// Runs ended after ``iterationLimit`` iterations (GLib spinning on a descriptor).
            var spun = 0
            var failures: [GLibError] = []
        }

        /// Far above what a scenario's run needs (a few iterations per pass; 50 passes at most).
        static let iterationLimit = 10_000
        private let state = Locked(Counts())

        var counts: Counts { state.withLock { $0 } }

        var runner: LoopRunner {
            LoopRunner { [self] loop, mode, seconds, returnAfterSourceHandled in
                run(loop, mode: mode, seconds: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
            }
        }

        private func run(_ loop: Loop, mode: Loop.Mode, seconds: Double, returnAfterSourceHandled: Bool) -> Loop.RunResult {
            do {
                let outcome = try GLibMainContext().run(loop, mode: mode, timeout: Self.duration(seconds),
                                                        returnAfterSourceHandled: returnAfterSourceHandled,
                                                        iterationLimit: Self.iterationLimit)
                state.withLock {
                    $0.hosted += 1
                    $0.iterations += outcome.iterations
                    if outcome.limitReached { $0.spun += 1 }
                }
                return outcome.result
            } catch .alreadyHostingOnThisThread {
                state.withLock { $0.nested += 1 }
            } catch {
                state.withLock { $0.failures.append(error) }
            }
            return loop.run(mode: mode, timeout: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
        }

        /// The timeout `Loop.run(mode:timeout:…)` makes of `seconds` (CF's reading): ≤ 0 polls
        /// once, beyond CF's interval limit (504,911,232 s) never times out.
        static func duration(_ seconds: Double) -> Duration? {
            seconds > 504_911_232 ? nil : .nanoseconds(Int64((max(seconds, 0) * 1e9).rounded()))
        }
    }

    /// What may differ hosted, and why (the suite's comment and Docs/Hosting.md).
    enum Declared {
        /// Runs hosted and runs left to the loop (nested in a hosted run's callout), by scenario:
        /// 17 hosted, 1 nested in all.
        static let runs: [String: (hosted: Int, nested: Int)] = [
            "seed-code1-source0": (1, 0),
            "seed-code1-button": (1, 0),
            "seed-code2-nested-blocks": (1, 0),
            "commit-coalescing": (1, 0),
            "autorelease-sawtooth": (2, 0),          // a flat run and one with a pool per item
            "autorelease-busy-source": (2, 0),       // pool observers and per-callout pools
            "timer-tracking-mode": (3, 0),           // default, tracking, default
            "perform-in-default-mode": (1, 1),       // the tracking run inside the touch's callout
            "resident-thread": (1, 0),               // on the resident thread
            "wait-for-callback": (2, 0),             // until the callback, then one poll
            "lag-monitor": (1, 0),
            "memory-peak-attribution": (1, 0),
        ]
        /// On the real clock: compared without times and without the positions of other threads'
        /// inputs.
        static let realClock: Set<String> = ["resident-thread", "wait-for-callback"]
        /// Checks whose detail counts the host's own work; the check itself must still pass.
        static let checkDetails: [String: Set<String>] = [
            "memory-peak-attribution": ["each turn's peak is the timer's peak plus under one page of the loop's own"],
        ]
    }

    static let runnable = ScenarioCatalog.all.filter { $0.unavailableReason == nil }.map(\.name)

    @Test("The scenario gives the same trace hosted in GLib as run natively", arguments: runnable)
    func hostedMatchesNative(_ name: String) throws {
        let scenario = try #require(ScenarioCatalog.named(name))
        let declaredRuns = try #require(Declared.runs[name], "\(name): declare its runs in HostedScenariosTests.Declared.runs")
        let native = scenario.run()
        let glib = GLibScenarioRunner()
        let hosted = scenario.run(ScenarioOptions(runner: glib.runner))
        let counts = glib.counts

        #expect(counts.failures.isEmpty, "\(name): \(counts.failures)")
        #expect(counts.spun == 0, "\(name): \(counts.spun) runs reached \(GLibScenarioRunner.iterationLimit) GLib iterations")
        #expect(counts.hosted == declaredRuns.hosted && counts.nested == declaredRuns.nested,
                "\(name): \(counts.hosted) runs hosted, \(counts.nested) nested; declared \(declaredRuns)")
        #expect(native.passed, "\(name) (native): \(ScenarioReport.failureDetails(native).joined(separator: "\n"))")
        #expect(hosted.passed, "\(name) (hosted): \(ScenarioReport.failureDetails(hosted).joined(separator: "\n"))")
        let differences = Self.differences(native, hosted, onRealClock: Declared.realClock.contains(name),
                                           checkDetailsMayDiffer: Declared.checkDetails[name] ?? [])
        #expect(differences.isEmpty, "\(name): hosted differs from native\n\(differences.joined(separator: "\n"))")
    }

    @Test("Every scenario of the main job is compared, or declared unavailable")
    func catalogIsCovered() {
        #expect(Set(Declared.runs.keys) == Set(ScenarioCatalog.all.map(\.name)))
        #expect(Declared.runs.values.map(\.hosted).reduce(0, +) == 17)
        #expect(Declared.runs.values.map(\.nested).reduce(0, +) == 1)
    }

    /// What differs between the two results, as readable lines (empty: nothing).
    static func differences(_ native: ScenarioResult, _ hosted: ScenarioResult, onRealClock: Bool,
                            checkDetailsMayDiffer: Set<String>) -> [String] {
        let withTimes = !onRealClock
        var found: [String] = []
        if native.produced != hosted.produced {
            found.append("compared lines:\n" + TraceDiff.lines(expected: native.produced, produced: hosted.produced).joined(separator: "\n"))
        }
        let nativeChecks = native.checks.map { Check($0, detailCounts: !checkDetailsMayDiffer.contains($0.name)) }
        let hostedChecks = hosted.checks.map { Check($0, detailCounts: !checkDetailsMayDiffer.contains($0.name)) }
        if nativeChecks != hostedChecks { found.append("checks: native \(native.checks)\n  hosted \(hosted.checks)") }
        let nativeEntries = native.entries.map { Entry($0, withTimes: withTimes) }
        let hostedEntries = hosted.entries.map { Entry($0, withTimes: withTimes) }
        if let first = firstDifference(nativeEntries, hostedEntries) {
            let window = max(0, first - 2)..<(first + 3)
            let show: ([TraceEntry]) -> String = { entries in
                window.filter { $0 < entries.count }.map { "    \(entries[$0])" }.joined(separator: "\n")
            }
            found.append("trace entry \(first) (of \(native.entries.count) native, \(hosted.entries.count) hosted):\n"
                         + "  native\n\(show(native.entries))\n  hosted\n\(show(hosted.entries))")
        }
        let nativeInputs = native.inputs.map { Input($0, withTimes: withTimes) }
        let hostedInputs = hosted.inputs.map { Input($0, withTimes: withTimes) }
        if nativeInputs != hostedInputs { found.append("inputs: native \(nativeInputs)\n  hosted \(hostedInputs)") }
        let nativeExternal = native.externalInputs.map { External($0, exact: !onRealClock) }
        let hostedExternal = hosted.externalInputs.map { External($0, exact: !onRealClock) }
        if nativeExternal != hostedExternal { found.append("other threads' inputs: native \(nativeExternal)\n  hosted \(hostedExternal)") }
        return found
    }

    /// The index of the first element that differs (one list ending first counts), or nil.
    static func firstDifference<T: Equatable>(_ a: [T], _ b: [T]) -> Int? {
        if let index = zip(a, b).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset { return index }
        return a.count == b.count ? nil : min(a.count, b.count)
    }

    /// A check as compared: its detail only where it is not declared to differ.
    struct Check: Equatable {
        let name: String
        let passed: Bool
        let detail: String?
        init(_ check: ScenarioCheck, detailCounts: Bool) {
            name = check.name
            passed = check.passed
            detail = detailCounts ? check.detail : nil
        }
    }

    /// A trace entry as compared: without the process's memory readings, and without times on
    /// the real clock.
    struct Entry: Equatable {
        let entry: TraceEntry
        init(_ entry: TraceEntry, withTimes: Bool) {
            var kind = entry.kind
            if case .memory(var sample) = kind {
                sample.residentBytes = 0
                sample.heapInUseBytes = 0
                if !withTimes { sample.time = LoopInstant(nanoseconds: 0) }
                kind = .memory(sample)
            }
            self.entry = TraceEntry(sequence: entry.sequence, kind: kind, label: entry.label, mode: entry.mode, pass: entry.pass,
                                    time: withTimes ? entry.time : LoopInstant(nanoseconds: 0), thread: entry.thread)
        }
    }

    /// An input the recorder saw, as compared.
    struct Input: Equatable {
        let after: Int
        let kind: LoopEvent.Kind
        let label: String
        let mode: Loop.Mode
        let pass: UInt64
        let time: LoopInstant?
        init(_ input: TraceInput, withTimes: Bool) {
            after = input.after
            kind = input.event.kind
            label = input.event.label
            mode = input.event.mode
            pass = input.event.pass
            time = withTimes ? input.event.time : nil
        }
    }

    /// An input another thread gave the loop, as compared: on the real clock only what it was
    /// (the order of the list is kept).
    struct External: Equatable {
        let after: Int?
        let action: ScenarioExternalInput.Action
        let time: LoopInstant?
        init(_ input: ScenarioExternalInput, exact: Bool) {
            after = exact ? input.after : nil
            action = input.action
            time = exact ? input.time : nil
        }
    }
}
