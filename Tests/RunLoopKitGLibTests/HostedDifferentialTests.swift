import RunLoopCore
import RunLoopDiagnostics
import Testing
@testable import RunLoopKitGLib

/// The differential suite's random operation scripts (its generator and interpreter, linked from
/// Tests/DifferentialTests), run twice on a virtual clock: natively (`Loop.run`) and hosted in
/// GLib (`GLibMainContext.run`: GLib's iteration drives the loop's hosted run, H1–H4). The two
/// traces — activities, callouts, run results, and the virtual time of each — must be the same.
///
/// Declared: a run nested in a callout of a hosted run is the loop's own (native) run in both,
/// as in a GTK program that runs the loop inside one of its callouts (a GLib context hosts one
/// loop run per thread at a time).
@Suite("Hosted differential")
struct HostedDifferentialTests {
    /// The interpreter's calls go to a `CoreLoopDriver`; its top-level runs go through GLib.
    final class GLibHostedDriver: LoopDriver {
        let core: CoreLoopDriver
        let context: GLibMainContext
        private var depth = 0
        private(set) var hostedRuns = 0
        private(set) var nestedRuns = 0
        private(set) var failures: [GLibError] = []
        /// Runs ended after ``iterationLimit`` GLib iterations.
        private(set) var spunRuns = 0
        /// Far above any script's need (a run of a script takes a few iterations per pass).
        static let iterationLimit = 10_000

        init(core: CoreLoopDriver, context: GLibMainContext) {
            self.core = core
            self.context = context
        }

        func addObserver(_ o: Int, _ mode: ScriptMode) { core.addObserver(o, mode) }
        func removeObserver(_ o: Int, _ mode: ScriptMode) { core.removeObserver(o, mode) }
        func invalidateObserver(_ o: Int) { core.invalidateObserver(o) }
        func addSource(_ s: Int, _ mode: ScriptMode) { core.addSource(s, mode) }
        func removeSource(_ s: Int, _ mode: ScriptMode) { core.removeSource(s, mode) }
        func signal(_ s: Int) { core.signal(s) }
        func invalidateSource(_ s: Int) { core.invalidateSource(s) }
        func addTimer(_ t: Int, _ mode: ScriptMode) { core.addTimer(t, mode) }
        func removeTimer(_ t: Int, _ mode: ScriptMode) { core.removeTimer(t, mode) }
        func invalidateTimer(_ t: Int) { core.invalidateTimer(t) }
        func setFireDate(_ t: Int, slot: Int) { core.setFireDate(t, slot: slot) }
        func perform(block b: Int, _ target: BlockTarget) { core.perform(block: b, target) }
        func stop() { core.stop() }
        func stopMode(_ mode: Int) { core.stopMode(mode) }
        func wakeUp() { core.wakeUp() }
        func addCommonMode(_ mode: Int) { core.addCommonMode(mode) }
        var elapsed: Double { core.elapsed }
        var isRealTime: Bool { false }
        func drainLeftoverWake() -> Bool { false }
        func tearDown() { core.tearDown() }

        func run(_ mode: ScriptMode, seconds: Double, rash: Bool) -> RunOutcome {
            guard depth == 0 else {
                nestedRuns += 1
                return core.run(mode, seconds: seconds, rash: rash)
            }
            depth += 1
            defer { depth -= 1 }
            hostedRuns += 1
            let loopMode: Loop.Mode
            switch mode {
            case .named(let index): loopMode = Loop.Mode(ScriptMode.modeNames[index])
            case .common: loopMode = .common
            }
            do {
                // The same conversion as Loop.run(mode:timeout:) makes of seconds.
                let timeout = Duration.nanoseconds(Int64((seconds * 1e9).rounded()))
                // Bounded: a run whose GLib iterations do not end it (the host spinning on a
                // descriptor that stays readable) is ended and counted.
                let outcome = try context.run(core.loop, mode: loopMode, timeout: timeout, returnAfterSourceHandled: rash,
                                              iterationLimit: Self.iterationLimit)
                if outcome.limitReached { spunRuns += 1 }
                return RunOutcome(rawValue: outcome.result.rawValue) ?? .finished
            } catch {
                failures.append(error)
                return .finished
            }
        }
    }

    /// One script's execution, natively or hosted.
    static func execute(_ script: Script, hostedIn context: GLibMainContext?) throws -> (Execution, GLibHostedDriver?) {
        let interpreter = ScriptInterpreter(script: script)
        let core = try CoreLoopDriver(script: script, interpreter: interpreter)
        var hosted: GLibHostedDriver?
        if let context {
            hosted = GLibHostedDriver(core: core, context: context)
            interpreter.driver = hosted
        } else {
            interpreter.driver = core
        }
        interpreter.runScript()
        interpreter.driver = nil
        return (interpreter.execution, hosted)
    }

    static let scriptCount = 1_000

    @Test("1,000 random scripts: the same trace and times hosted in GLib as run natively")
    func randomScriptsHostedMatchNative() throws {
        // Scripts add invalidated items and run the common pseudo-mode on purpose.
        let recorder = DiagnosticsRecorder(capturing: [.addRefused, .runCommonModes])
        defer { _ = recorder.stop() }
        let context = try GLibMainContext()
        var differences: [String] = []
        var hostedRuns = 0, nestedRuns = 0, waits = 0
        for seed in 0..<UInt64(Self.scriptCount) {
            let script = ScriptGenerator.make(seed: seed)
            let (native, _) = try Self.execute(script, hostedIn: nil)
            let (hosted, driver) = try Self.execute(script, hostedIn: context)
            let glib = try #require(driver)
            #expect(glib.failures.isEmpty, "seed \(seed): \(glib.failures)")
            #expect(glib.spunRuns == 0, "seed \(seed): \(glib.spunRuns) runs reached \(GLibHostedDriver.iterationLimit) GLib iterations")
            hostedRuns += glib.hostedRuns
            nestedRuns += glib.nestedRuns
            waits += TraceCoverage([hosted.trace]).waits
            if native.trace != hosted.trace || native.times != hosted.times {
                differences.append("seed \(seed)\n\(script)\n-- native\n\(Execution.format(native.trace))\n-- hosted\n\(Execution.format(hosted.trace))")
                if differences.count >= 3 { break }
            }
        }
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n\n"))")
        // What the scripts exercised hosted: runs, nested runs and real waits (BW…AW pairs).
        // Measured: 3,440 hosted runs, 130 nested runs, 1,174 waits.
        #expect(hostedRuns > 3_000, "hosted runs: \(hostedRuns)")
        #expect(nestedRuns > 100, "nested runs: \(nestedRuns)")
        #expect(waits > 1_000, "waits: \(waits)")
    }
}

