// Runs a script against a `LoopDriver`. All decisions that do not belong to the loop under test
// (which actions run on which invocation, when a nested run is allowed, the S4 condition) are
// made here, once, for both executors, so the two traces differ only where the loops differ.

/// What an executor must provide. Everything is called on the script's own thread.
protocol LoopDriver: AnyObject {
    func addObserver(_ o: Int, _ mode: ScriptMode)
    func removeObserver(_ o: Int, _ mode: ScriptMode)
    func invalidateObserver(_ o: Int)
    func addSource(_ s: Int, _ mode: ScriptMode)
    func removeSource(_ s: Int, _ mode: ScriptMode)
    func signal(_ s: Int)
    func invalidateSource(_ s: Int)
    func addTimer(_ t: Int, _ mode: ScriptMode)
    func removeTimer(_ t: Int, _ mode: ScriptMode)
    func invalidateTimer(_ t: Int)
    func setFireDate(_ t: Int, slot: Int)
    func perform(block b: Int, _ target: BlockTarget)
    func stop()
    func stopMode(_ mode: Int)
    func wakeUp()
    func addCommonMode(_ mode: Int)
    func run(_ mode: ScriptMode, seconds: Double, rash: Bool) -> RunOutcome
    /// Seconds since the script started, on the clock the loop uses.
    var elapsed: Double { get }
    /// True when the clock is real time (CF), so grid drift must be checked.
    var isRealTime: Bool { get }
    /// L-g: consume a wake-up left pending by a finished run. Returns true if there was one. Our
    /// loop never carries one over and returns false.
    func drainLeftoverWake() -> Bool
    /// Invalidate everything so nothing outlives the script.
    func tearDown()
}

final class ScriptInterpreter: @unchecked Sendable {  // confined to the script's thread
    let script: Script
    private(set) var execution = Execution()
    var driver: LoopDriver!

    private enum Item: Hashable { case observer(Int), source(Int), timer(Int) }
    private var invocations: [Item: Int] = [:]

    // S4 bookkeeping: which sources are signalled (as far as the script can tell).
    private var sourceValid: [Bool]
    private var signalled: Set<Int> = []
    /// One entry per source0 perform on the stack: the sources still signalled when it began
    /// (a superset of what that DoSources0 has yet to visit) and whether its run was rash (then
    /// DoSources0 stops after the first perform and S4 cannot apply).
    private struct PerformFrame { var pending: Set<Int>; var rash: Bool }
    private var performFrames: [PerformFrame] = []
    private var s4Reached = false

    private struct Frame {
        var timeout: RunTimeout
        var rash: Bool
        var start: Double
        var entered = false
        /// Script time of the last BeforeWaiting of this run (real-time check of relative timeouts).
        var lastBeforeWaiting: Double?
    }
    private var frames: [Frame] = []

    init(script: Script) {
        self.script = script
        sourceValid = Array(repeating: true, count: script.sources.count)
    }

    func runScript() {
        for step in script.steps { execute(step) }
        driver.tearDown()
    }

    // MARK: operations

    private func execute(_ op: ScriptOp) {
        switch op {
        case .addObserver(let o, let m): driver.addObserver(o, m)
        case .removeObserver(let o, let m): driver.removeObserver(o, m)
        case .invalidateObserver(let o): driver.invalidateObserver(o)
        case .addSource(let s, let m): driver.addSource(s, m)
        case .removeSource(let s, let m): driver.removeSource(s, m)
        case .signal(let s):
            if sourceValid[s] { signalled.insert(s) }
            driver.signal(s)
        case .invalidateSource(let s):
            if losesSignalInsideDoSources0(s) { markS4() }
            sourceValid[s] = false
            signalled.remove(s)
            driver.invalidateSource(s)
        case .addTimer(let t, let m): driver.addTimer(t, m)
        case .removeTimer(let t, let m): driver.removeTimer(t, m)
        case .invalidateTimer(let t): driver.invalidateTimer(t)
        case .setFireDate(let t, let slot): driver.setFireDate(t, slot: slot)
        case .perform(let b, let target): driver.perform(block: b, target)
        case .stop: driver.stop()
        case .stopMode(let m): driver.stopMode(m)
        case .wakeUp: driver.wakeUp()
        case .addCommonMode(let m): driver.addCommonMode(m)
        case .run(let mode, let timeout, let rash): run(mode, timeout, rash: rash)
        }
    }

    private func run(_ mode: ScriptMode, _ requested: RunTimeout, rash: Bool) {
        var timeout = requested
        if !frames.isEmpty {
            // Nested runs. CF's run timeout is a dispatch timer that calls CFRunLoopWakeUp once;
            // if that wake-up lands inside a nested run, the outer run can sleep forever. So a
            // nested run is allowed only where the enclosing deadlines cannot fall inside it.
            if frames.count >= 3 { return }
            if !script.usesTimeGrid {
                if frames.contains(where: { $0.timeout != .poll }) { return }
                timeout = .poll
            } else if case .until(let slot) = timeout {
                let enclosing = frames.compactMap { frame -> Int? in
                    if case .until(let s) = frame.timeout { return s }
                    return nil
                }.min()
                if let limit = enclosing, slot >= limit { timeout = .poll }
            }
        }
        let seconds: Double
        switch timeout {
        case .poll: seconds = 0
        case .relative(let ms): seconds = Double(ms) / 1000
        case .until(let slot): seconds = max(0, Double(slot * script.gridMs) / 1000 - driver.elapsed)
        }
        record(.runBegin(mode, timeout, rash: rash))
        frames.append(Frame(timeout: timeout, rash: rash, start: driver.elapsed))
        let outcome = driver.run(mode, seconds: seconds, rash: rash)
        let frame = frames.removeLast()
        checkGrid()
        checkRelativeTimeout(frame)
        record(.runEnd(outcome))
        // L-g: CF keeps a wake-up that no wait consumed (issued before a stop at L0, or left
        // behind when a wait took another port, L-c) and the next run then wakes at once. Our
        // loop never carries a wake-up from one run to the next, so between top-level runs the
        // CF executor consumes any that is left (counted under L-g).
        if frames.isEmpty && frame.entered && driver.drainLeftoverWake() {
            execution.wakeDrains += 1
        }
    }

    /// S4 applies when a source that an enclosing (non-rash) DoSources0 may still visit loses its
    /// signal or validity before its turn: SCF then returns that source's "not handled".
    private func losesSignalInsideDoSources0(_ s: Int) -> Bool {
        signalled.contains(s) && performFrames.contains { !$0.rash && $0.pending.contains(s) }
    }

    private func markS4() {
        if !s4Reached { record(.s4Marker) }
        s4Reached = true
    }

    private func record(_ event: TraceEvent) {
        execution.trace.append(event)
        execution.times.append(driver.elapsed)
    }

    /// Grid scripts only: every callout must happen within the budget after a grid point.
    private func checkGrid() {
        guard script.usesTimeGrid, driver.isRealTime, execution.timingViolation == nil else { return }
        let ms = driver.elapsed * 1000
        let offset = ms.truncatingRemainder(dividingBy: Double(script.gridMs))
        if offset > Double(ScriptGenerator.gridBudgetMs) {
            execution.timingViolation = "callout at \(ms) ms is \(offset) ms after its grid point"
        }
    }

    /// Relative timeouts: in a plain script nothing but the run's own deadline can wake the loop,
    /// so every pass of the run must reach its wait long before the deadline. A CF run that was
    /// still busy at half its timeout (a descheduled thread on a loaded machine) might have seen
    /// the deadline pass where the virtual clock cannot; such a run is no reference (retried).
    private func checkRelativeTimeout(_ frame: Frame) {
        guard driver.isRealTime, execution.timingViolation == nil, case .relative(let ms) = frame.timeout else { return }
        let busyUntil = frame.lastBeforeWaiting ?? driver.elapsed
        let busyMs = (busyUntil - frame.start) * 1000
        if busyMs > Double(ms) / 2 {
            execution.timingViolation = "run with a \(ms) ms timeout was still busy after \(busyMs) ms"
        }
    }

    private func invoke(_ item: Item) -> [ScriptOp] {
        let n = (invocations[item] ?? 0) + 1
        invocations[item] = n
        switch item {
        case .observer(let o): return script.observers[o].actions[n] ?? []
        case .source(let s): return script.sources[s].actions[n] ?? []
        case .timer(let t): return script.timers[t].actions[n] ?? []
        }
    }

    // MARK: callouts (called by the drivers)

    func tracer(_ mode: ScriptMode, _ activity: ScriptActivity) {
        checkGrid()
        if let last = frames.indices.last {
            if activity == .entry { frames[last].entered = true }
            if activity == .beforeWaiting { frames[last].lastBeforeWaiting = driver.elapsed }
        }
        record(.activity(mode, activity))
    }

    func observerFired(_ o: Int, _ activity: ScriptActivity) {
        checkGrid()
        let actions = invoke(.observer(o))
        record(.observer(o, activity, acted: !actions.isEmpty))
        actions.forEach(execute)
    }

    func sourceFired(_ s: Int) {
        checkGrid()
        if losesSignalInsideDoSources0(s) { markS4() }
        signalled.remove(s)
        let actions = invoke(.source(s))
        record(.source(s, acted: !actions.isEmpty))
        performFrames.append(PerformFrame(pending: signalled, rash: frames.last?.rash ?? false))
        actions.forEach(execute)
        performFrames.removeLast()
    }

    func timerFired(_ t: Int) {
        checkGrid()
        let actions = invoke(.timer(t))
        record(.timer(t, acted: !actions.isEmpty))
        actions.forEach(execute)
    }

    func blockFired(_ b: Int) {
        checkGrid()
        let actions = script.blocks[b].actions
        record(.block(b, acted: !actions.isEmpty))
        actions.forEach(execute)
    }
}
