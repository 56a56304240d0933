// The reference executor: the real CFRunLoop of swift-corelibs-foundation, driven through
// `import CoreFoundation` (the symbols live in libFoundation, hence `import Foundation`).
// Friction of CoreFoundation in Swift on Linux: no CFString bridging, C function pointers for source0 callbacks,
// `_CFRunLoopStopMode` only through @_silgen_name.

import CoreFoundation
import Foundation

@_silgen_name("_CFRunLoopStopMode")
private func cfRunLoopStopMode(_ rl: CFRunLoop, _ mode: CFString)

/// The info box of a source0: C callbacks cannot capture, so they find their way back here.
private final class SourceBox {
    let index: Int
    weak var interpreter: ScriptInterpreter?
    init(index: Int, interpreter: ScriptInterpreter) {
        self.index = index
        self.interpreter = interpreter
    }
}

private func cfString(_ s: String) -> CFString {
    CFStringCreateWithCString(kCFAllocatorDefault, s, CFStringBuiltInEncodings.UTF8.rawValue)
}

final class CFDriver: LoopDriver {
    private let rl: CFRunLoop
    private let modeNames: [CFString]
    private let gridStart: CFAbsoluteTime
    private let gridMs: Int
    private var observers: [CFRunLoopObserver] = []
    private var tracers: [CFRunLoopObserver] = []
    private var sources: [CFRunLoopSource] = []
    private var sourceBoxes: [SourceBox] = []
    private var timers: [CFRunLoopTimer] = []
    private weak var interpreter: ScriptInterpreter?

    // L-g wake drain: a private mode with an idle source and an AfterWaiting counter.
    private let drainMode = cfString("DifferentialWakeDrain")
    private var drainSource: CFRunLoopSource?
    private var drainObserver: CFRunLoopObserver?
    private var drainWakes = 0

    /// Must be created on the thread whose run loop it drives, fresh for every script.
    init(script: Script, interpreter: ScriptInterpreter) {
        rl = CFRunLoopGetCurrent()
        self.interpreter = interpreter
        gridMs = script.gridMs
        modeNames = ScriptMode.modeNames.enumerated().map { i, name in i == 0 ? kCFRunLoopDefaultMode! : cfString(name) }
        gridStart = CFAbsoluteTimeGetCurrent()

        // Tracers run first (lowest order) so every activity appears before its observers.
        for (i, name) in modeNames.enumerated() {
            let tracer = CFRunLoopObserverCreateWithHandler(kCFAllocatorDefault, CFOptionFlags(0x0FFF_FFFF), true, Int.min) {
                [weak interpreter] _, activity in
                if let a = ScriptActivity.from(raw: UInt32(activity.rawValue)) { interpreter?.tracer(.named(i), a) }
            }!
            CFRunLoopAddObserver(rl, tracer, name)
            tracers.append(tracer)
        }
        for (i, spec) in script.observers.enumerated() {
            let observer = CFRunLoopObserverCreateWithHandler(kCFAllocatorDefault, CFOptionFlags(spec.activities), spec.repeats, spec.order) {
                [weak interpreter] _, activity in
                if let a = ScriptActivity.from(raw: UInt32(activity.rawValue)) { interpreter?.observerFired(i, a) }
            }!
            observers.append(observer)
        }
        for (i, spec) in script.sources.enumerated() {
            let box = SourceBox(index: i, interpreter: interpreter)
            sourceBoxes.append(box)
            sources.append(Self.makeSource(order: spec.order, info: Unmanaged.passUnretained(box).toOpaque()))
        }
        for (i, spec) in script.timers.enumerated() {
            let grid = Double(script.gridMs) / 1000
            let timer = CFRunLoopTimerCreateWithHandler(kCFAllocatorDefault, gridStart + Double(spec.fireSlot) * grid,
                                                        Double(spec.intervalSlots) * grid, 0, 0) { [weak interpreter] _ in
                interpreter?.timerFired(i)
            }!
            timers.append(timer)
        }
    }

    private static func makeSource(order: Int, info: UnsafeMutableRawPointer) -> CFRunLoopSource {
        var context = CFRunLoopSourceContext(
            version: 0, info: info, retain: nil, release: nil, copyDescription: nil, equal: nil, hash: nil,
            schedule: nil, cancel: nil,
            perform: { info in
                // The drain source (info 1) is never signalled; guard anyway.
                guard let info, Int(bitPattern: info) != 1 else { return }
                let box = Unmanaged<SourceBox>.fromOpaque(info).takeUnretainedValue()
                box.interpreter?.sourceFired(box.index)
            })
        return CFRunLoopSourceCreate(kCFAllocatorDefault, order, &context)
    }

    private func cfMode(_ mode: ScriptMode) -> CFString {
        switch mode {
        case .named(let i): return modeNames[i]
        case .common: return kCFRunLoopCommonModes
        }
    }

    func addObserver(_ o: Int, _ mode: ScriptMode) { CFRunLoopAddObserver(rl, observers[o], cfMode(mode)) }
    func removeObserver(_ o: Int, _ mode: ScriptMode) { CFRunLoopRemoveObserver(rl, observers[o], cfMode(mode)) }
    func invalidateObserver(_ o: Int) { CFRunLoopObserverInvalidate(observers[o]) }
    func addSource(_ s: Int, _ mode: ScriptMode) { CFRunLoopAddSource(rl, sources[s], cfMode(mode)) }
    func removeSource(_ s: Int, _ mode: ScriptMode) { CFRunLoopRemoveSource(rl, sources[s], cfMode(mode)) }
    func signal(_ s: Int) { CFRunLoopSourceSignal(sources[s]) }
    func invalidateSource(_ s: Int) { CFRunLoopSourceInvalidate(sources[s]) }
    func addTimer(_ t: Int, _ mode: ScriptMode) { CFRunLoopAddTimer(rl, timers[t], cfMode(mode)) }
    func removeTimer(_ t: Int, _ mode: ScriptMode) { CFRunLoopRemoveTimer(rl, timers[t], cfMode(mode)) }
    func invalidateTimer(_ t: Int) { CFRunLoopTimerInvalidate(timers[t]) }
    func setFireDate(_ t: Int, slot: Int) {
        CFRunLoopTimerSetNextFireDate(timers[t], gridStart + Double(slot * gridMs) / 1000)
    }

    func perform(block b: Int, _ target: BlockTarget) {
        let modeRef: CFTypeRef
        switch target {
        case .mode(let m): modeRef = cfMode(m)
        case .modes(let list):
            var values: [UnsafeRawPointer?] = list.map { UnsafeRawPointer(Unmanaged.passUnretained(modeNames[$0]).toOpaque()) }
            modeRef = withUnsafePointer(to: kCFTypeArrayCallBacks) { callbacks in
                CFArrayCreate(kCFAllocatorDefault, &values, values.count, callbacks)
            }
        }
        let interpreter = self.interpreter
        CFRunLoopPerformBlock(rl, modeRef) { interpreter?.blockFired(b) }
    }

    func stop() { CFRunLoopStop(rl) }
    func stopMode(_ mode: Int) { cfRunLoopStopMode(rl, modeNames[mode]) }
    func wakeUp() { CFRunLoopWakeUp(rl) }
    func addCommonMode(_ mode: Int) { CFRunLoopAddCommonMode(rl, modeNames[mode]) }

    func run(_ mode: ScriptMode, seconds: Double, rash: Bool) -> RunOutcome {
        let result = CFRunLoopRunInMode(cfMode(mode), seconds, rash)
        return RunOutcome(rawValue: result.rawValue) ?? .finished
    }

    var elapsed: Double { CFAbsoluteTimeGetCurrent() - gridStart }
    var isRealTime: Bool { true }

    func drainLeftoverWake() -> Bool {
        if drainSource == nil {
            let source = Self.makeSource(order: 0, info: UnsafeMutableRawPointer(bitPattern: 1)!)
            CFRunLoopAddSource(rl, source, drainMode)
            drainSource = source
            let observer = CFRunLoopObserverCreateWithHandler(kCFAllocatorDefault, CFOptionFlags(64), true, 0) { [weak self] _, _ in
                self?.drainWakes += 1
            }!
            CFRunLoopAddObserver(rl, observer, drainMode)
            drainObserver = observer
        }
        // A pending wake-up makes the first wait return at once: two AfterWaiting instead of one.
        // The drain ends by its own timer, not by a run timeout: CF's run timeout is a dispatch
        // timer whose handler can still call CFRunLoopWakeUp after the run returned (a race seen
        // under load), which would plant exactly the kind of stray wake-up this removes.
        drainWakes = 0
        let loop = rl
        let end = CFRunLoopTimerCreateWithHandler(kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + 0.0005, 0, 0, 0) { _ in
            CFRunLoopStop(loop)
        }!
        CFRunLoopAddTimer(rl, end, drainMode)
        CFRunLoopRunInMode(drainMode, 1e10, false)  // > 504911232 s: no dispatch timer at all
        CFRunLoopTimerInvalidate(end)
        return drainWakes > 1
    }

    func tearDown() {
        (observers + tracers).forEach { CFRunLoopObserverInvalidate($0) }
        sources.forEach { CFRunLoopSourceInvalidate($0) }
        timers.forEach { CFRunLoopTimerInvalidate($0) }
        if let drainSource { CFRunLoopSourceInvalidate(drainSource) }
        if let drainObserver { CFRunLoopObserverInvalidate(drainObserver) }
    }
}
