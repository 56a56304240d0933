// The executor under test: RunLoopCore's `Loop` on a virtual clock. Every wait jumps straight to
// the next deadline, which is exact because the scripts only schedule events on whole slots of
// their time grid (or use fixed timeouts during which nothing else can happen).

import RunLoopCore

final class CoreLoopDriver: LoopDriver {
    let loop: Loop
    let clock: VirtualClock
    /// Where the script's signals and wake-ups go: straight to the items, or (the replay
    /// tests of RunLoopTesting, which share this file) through a recorder that logs them.
    var signalSource: (LoopSource) -> Void = { $0.signal() }
    var wakeLoop: (Loop) -> Void = { $0.wakeUp() }
    private let start: LoopInstant
    private let gridNs: UInt64
    private var observers: [LoopObserver] = []
    private var tracers: [LoopObserver] = []
    private var sources: [LoopSource] = []
    private var timers: [LoopTimer] = []
    private weak var interpreter: ScriptInterpreter?

    /// The virtual clock's reading when a script starts.
    static let scriptStart = LoopInstant(nanoseconds: 1_000_000_000)

    /// Must be created on the thread that runs the script (the loop is bound to it). Pass a
    /// loop (made on this thread, on `clock`, starting at `scriptStart`) to run the script on it.
    init(script: Script, interpreter: ScriptInterpreter, on given: (loop: Loop, clock: VirtualClock)? = nil) throws {
        clock = given?.clock ?? VirtualClock(start: Self.scriptStart)
        loop = given?.loop ?? Loop(clock: clock)
        start = clock.now
        self.interpreter = interpreter

        for i in ScriptMode.modeNames.indices {
            let tracer = LoopObserver(activities: .allActivities, order: Int.min, label: "tracer") {
                [weak interpreter] _, activity in
                if let a = ScriptActivity.from(raw: activity.rawValue) { interpreter?.tracer(.named(i), a) }
            }
            loop.add(tracer, mode: Self.mode(.named(i)))
            tracers.append(tracer)
        }
        for (i, spec) in script.observers.enumerated() {
            observers.append(LoopObserver(activities: Loop.Activity(rawValue: spec.activities), repeats: spec.repeats,
                                          order: spec.order, label: "o\(i)") { [weak interpreter] _, activity in
                if let a = ScriptActivity.from(raw: activity.rawValue) { interpreter?.observerFired(i, a) }
            })
        }
        for (i, spec) in script.sources.enumerated() {
            sources.append(LoopSource(order: spec.order, label: "s\(i)") { [weak interpreter] in
                interpreter?.sourceFired(i)
            })
        }
        gridNs = UInt64(script.gridMs) * 1_000_000
        for (i, spec) in script.timers.enumerated() {
            timers.append(try LoopTimer(fireAt: instant(slot: spec.fireSlot),
                                        interval: Double(spec.intervalSlots * script.gridMs) / 1000,
                                        label: "t\(i)") { [weak interpreter] _ in
                interpreter?.timerFired(i)
            })
        }
    }

    private static func mode(_ mode: ScriptMode) -> Loop.Mode {
        switch mode {
        case .named(let i): return Loop.Mode(ScriptMode.modeNames[i])
        case .common: return .common
        }
    }

    func addObserver(_ o: Int, _ mode: ScriptMode) { loop.add(observers[o], mode: Self.mode(mode)) }
    func removeObserver(_ o: Int, _ mode: ScriptMode) { loop.remove(observers[o], mode: Self.mode(mode)) }
    func invalidateObserver(_ o: Int) { observers[o].invalidate() }
    func addSource(_ s: Int, _ mode: ScriptMode) { loop.add(sources[s], mode: Self.mode(mode)) }
    func removeSource(_ s: Int, _ mode: ScriptMode) { loop.remove(sources[s], mode: Self.mode(mode)) }
    func signal(_ s: Int) { signalSource(sources[s]) }
    func invalidateSource(_ s: Int) { sources[s].invalidate() }
    func addTimer(_ t: Int, _ mode: ScriptMode) { loop.add(timers[t], mode: Self.mode(mode)) }
    func removeTimer(_ t: Int, _ mode: ScriptMode) { loop.remove(timers[t], mode: Self.mode(mode)) }
    func invalidateTimer(_ t: Int) { timers[t].invalidate() }
    func setFireDate(_ t: Int, slot: Int) { timers[t].setNextFireDate(instant(slot: slot)) }

    /// The instant of grid slot `slot` (slots count from the script's start).
    private func instant(slot: Int) -> LoopInstant { start.advanced(by: .nanoseconds(Int64(slot) * Int64(gridNs))) }

    func perform(block b: Int, _ target: BlockTarget) {
        // The interpreter is confined to this thread; blocks only run on it.
        let interpreter = UncheckedBox(value: self.interpreter)
        switch target {
        case .mode(let m): loop.perform(inMode: Self.mode(m), label: "b\(b)") { interpreter.value?.blockFired(b) }
        case .modes(let list):
            loop.perform(inModes: list.map { Self.mode(.named($0)) }, label: "b\(b)") { interpreter.value?.blockFired(b) }
        }
    }

    func stop() { loop.stop() }
    func stopMode(_ mode: Int) { loop.stop(mode: Self.mode(.named(mode))) }
    func wakeUp() { wakeLoop(loop) }
    func addCommonMode(_ mode: Int) { loop.addCommonMode(Self.mode(.named(mode))) }

    func run(_ mode: ScriptMode, seconds: Double, rash: Bool) -> RunOutcome {
        let result = loop.run(mode: Self.mode(mode), timeout: seconds, returnAfterSourceHandled: rash)
        return RunOutcome(rawValue: result.rawValue) ?? .finished
    }

    var elapsed: Double { Double(clock.now.nanoseconds - start.nanoseconds) / 1e9 }
    var isRealTime: Bool { false }
    func drainLeftoverWake() -> Bool { false }

    func tearDown() {
        (observers + tracers).forEach { $0.invalidate() }
        sources.forEach { $0.invalidate() }
        timers.forEach { $0.invalidate() }
        // W6 for a detached loop: pending blocks dropped, descriptors closed now.
        loop.tearDown()
    }
}

/// Carries a weak, thread-confined reference into a `@Sendable` block. Safe because the block
/// only runs on the loop's thread, which is the script's thread.
private struct UncheckedBox: @unchecked Sendable {
    weak var value: ScriptInterpreter?
}
