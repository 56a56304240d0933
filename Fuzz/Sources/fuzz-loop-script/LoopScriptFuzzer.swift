// libFuzzer entry: each input is an operation script run on a fresh loop on the virtual clock
// with the standard observers (pools, commit pipeline). After every step and at teardown it
// checks the invariants and traps on a violation, so libFuzzer keeps the input as a crash.
import RunLoopKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLoopScript(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var script = ScriptBytes(UnsafeBufferPointer(start: data, count: min(size, 4096)))
    let descriptorsBefore = openDescriptorCount()
    LoopScriptRun().run(&script)   // the run and its loop are gone when it returns
    let descriptorsAfter = openDescriptorCount()
    if descriptorsAfter != descriptorsBefore { violated("loop descriptors \(descriptorsBefore) → \(descriptorsAfter)") }
    return 0
}

/// The input, read a byte at a time; 0 once it is used up.
struct ScriptBytes {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }
    var isAtEnd: Bool { index >= bytes.count }
    mutating func next() -> Int {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return Int(bytes[index])
    }
}

/// A count shared with `@Sendable` block closures (all on this thread).
final class Count: Sendable {
    private let value = Atomic<Int>(0)
    func add(_ n: Int = 1) { value.wrappingAdd(n, ordering: .relaxed) }
    var now: Int { value.load(ordering: .relaxed) }
}

/// An object whose lifetime the pools decide: `live` must be 0 whenever no pool is open.
final class Tracked {
    static let live = Count()
    init() { Tracked.live.add() }
    deinit { Tracked.live.add(-1) }
}

/// Fails the input: libFuzzer reports the crash and saves the script.
func violated(_ what: String) -> Never {
    fatalError("invariant violated: \(what)")
}

/// Open eventfd, epoll and timerfd descriptors (the kinds a loop creates); other descriptors
/// come and go with libFuzzer's own work.
func openDescriptorCount() -> Int {
    guard let dir = opendir("/proc/self/fd") else { return -1 }
    defer { closedir(dir) }
    var count = 0
    var target = [CChar](repeating: 0, count: 64)
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let length = readlink("/proc/self/fd/" + name, &target, target.count - 1)
        guard length > 0 else { continue }
        let text = String(decoding: target.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasSuffix("[eventfd]") || text.hasSuffix("[eventpoll]") || text.hasSuffix("[timerfd]") { count += 1 }
    }
    return count
}

final class LoopScriptRun {
    let clock = VirtualClock()
    let loop: Loop
    let modes: [Loop.Mode] = [.default, "M1", .common]
    let pipeline: CommitPipeline
    let layers: [Layer]

    struct SourceRecord { let source: LoopSource; var pendingSignal: Bool; let performed: Count }
    struct PortRecord { let port: LoopPortSource; var sent: Int; var dropped: Int; let delivered: Count }
    struct TimerRecord { let timer: LoopTimer; let repeats: Bool; let fired: Count }
    var sources: [SourceRecord] = []
    var ports: [PortRecord] = []
    var timers: [TimerRecord] = []
    var observers: [LoopObserver] = []
    let blocksQueued = Count()
    let blocksRun = Count()
    let submitted = Count()
    let submittedRun = Count()
    var depth = 0

    init() {
        loop = Loop(clock: clock)
        pipeline = CommitPipeline(clock: LoopTransactionClock(clock))
        let root = Layer(name: "root")
        let child = Layer(name: "child")
        root.addSublayer(child)
        layers = [root, child]
    }

    func mode(_ byte: Int) -> Loop.Mode { modes[byte % modes.count] }

    func run(_ script: inout ScriptBytes) {
        pipeline.asCurrent {
            let standard = StandardObservers(installedOn: loop, modes: [.common, "M1"], pipeline: pipeline)
            var steps = 0
            while !script.isAtEnd && steps < 256 {
                step(&script)
                checkBetweenSteps()
                steps += 1
            }
            drainAndCheck()
            standard.uninstall()
            loop.tearDown()
            checkTornDown()
            if pipeline.explicitTransactionDepth != 0 { violated("an explicit transaction is still open at the end") }
        }
        sources.removeAll()
        ports.removeAll()
        timers.removeAll()
        observers.removeAll()
        if Tracked.live.now != 0 { violated("\(Tracked.live.now) autoreleased objects outlived every pool") }
    }

    // MARK: Operations

    func step(_ script: inout ScriptBytes) {
        switch script.next() % 16 {
        case 0:
            let performed = Count()
            let index = sources.count
            let nests = script.next() % 4 == 0
            // Its perform touches this run's state: an owner-thread source (checked at each call).
            let source = LoopSource(order: script.next() % 3, label: "s\(index)", onOwnerThreadOf: loop) { [unowned self] in
                performed.add()
                sources[index].pendingSignal = false
                _ = AutoreleasePool.autorelease(Tracked())
                if nests && depth < 2 {   // a nested run of another mode from inside a callout
                    depth += 1
                    loop.run(mode: "M1", timeout: .zero)
                    depth -= 1
                }
            }
            sources.append(SourceRecord(source: source, pendingSignal: false, performed: performed))
            loop.add(source, mode: mode(script.next()))
        case 1:
            guard !sources.isEmpty else { return }
            let index = script.next() % sources.count
            sources[index].source.signal()
            if sources[index].source.isValid { sources[index].pendingSignal = true }
        case 2:
            let fired = Count()
            let repeats = script.next() % 3 == 0
            let delay = Duration.milliseconds(script.next() % 50)
            guard let timer = try? LoopTimer(after: delay, clock: clock, interval: repeats ? .milliseconds(1 + script.next() % 20) : .zero,
                                             tolerance: .milliseconds(script.next() % 5), label: "t\(timers.count)", { _ in
                fired.add()
                _ = AutoreleasePool.autorelease(Tracked())
            }) else { violated("a valid timer was refused") }
            timers.append(TimerRecord(timer: timer, repeats: repeats, fired: fired))
            loop.add(timer, mode: mode(script.next()))
        case 3:
            guard !timers.isEmpty else { return }
            timers[script.next() % timers.count].timer.invalidate()
        case 4:
            let observer = LoopObserver(activities: Loop.Activity(rawValue: UInt32(script.next()) & 0xE7),
                                        repeats: script.next() % 2 == 0, order: script.next() % 5, label: "o\(observers.count)") { _, _ in
                _ = AutoreleasePool.autorelease(Tracked())
            }
            observers.append(observer)
            loop.add(observer, mode: mode(script.next()))
        case 5:
            let delivered = Count()
            // Out of descriptors: the script goes on without this port.
            guard let port = try? LoopPortSource(label: "p\(ports.count)", capacity: 1 + script.next() % 8,
                                      messagesPerPass: 1 + script.next() % 3, handler: { _ in delivered.add() }) else { return }
            ports.append(PortRecord(port: port, sent: 0, dropped: 0, delivered: delivered))
            loop.add(port, mode: mode(script.next()))
        case 6:
            guard !ports.isEmpty else { return }
            let index = script.next() % ports.count
            for _ in 0..<(1 + script.next() % 4) {
                do {
                    try ports[index].port.send([UInt8(truncatingIfNeeded: ports[index].sent)])
                    ports[index].sent += 1
                } catch {
                    // .full or .closed: refused and not queued, as documented
                }
            }
        case 7:
            runOnce(mode(script.next()), timeout: .milliseconds(script.next() % 40), stopAfterSource: script.next() % 2 == 0)
        case 8:
            removeSomething(&script)
        case 9:
            blocksQueued.add()
            let ran = blocksRun
            loop.perform(inMode: mode(script.next())) { ran.add() }
        case 10:
            let layer = layers[script.next() % layers.count]
            if script.next() % 2 == 0 { layer.setNeedsLayout() } else { layer.setNeedsDisplay() }
        case 11:
            LayerTransaction.begin()
            layers[script.next() % layers.count].setNeedsDisplay()
            do { try LayerTransaction.commit() } catch { violated("commit of a balanced transaction threw \(error)") }
        case 12:
            withAutoreleasePool {
                for _ in 0..<(script.next() % 8) { _ = AutoreleasePool.autorelease(Tracked()) }
            }
        case 13:
            try? clock.advance(by: .milliseconds(script.next() % 30))
        case 14:
            submitted.add()
            let ran = submittedRun
            loop.submit { ran.add() }
        default:
            if !ports.isEmpty && script.next() % 4 == 0 {
                let index = script.next() % ports.count
                ports[index].dropped += ports[index].port.pendingCount
                ports[index].port.invalidate()
            } else if !sources.isEmpty {
                let index = script.next() % sources.count
                sources[index].source.invalidate()
                sources[index].pendingSignal = false
            }
        }
    }

    func removeSomething(_ script: inout ScriptBytes) {
        let mode = mode(script.next())
        switch script.next() % 4 {
        case 0 where !sources.isEmpty: loop.remove(sources[script.next() % sources.count].source, mode: mode)
        case 1 where !ports.isEmpty: loop.remove(ports[script.next() % ports.count].port, mode: mode)
        case 2 where !timers.isEmpty: loop.remove(timers[script.next() % timers.count].timer, mode: mode)
        case 3 where !observers.isEmpty: loop.remove(observers[script.next() % observers.count], mode: mode)
        default: break
        }
    }

    func runOnce(_ mode: Loop.Mode, timeout: Duration, stopAfterSource: Bool) {
        let result = loop.run(mode: mode, timeout: timeout, returnAfterSourceHandled: stopAfterSource)
        // The pool observers pop at Exit and the commit observer commits at BeforeWaiting and
        // Exit (both are installed in every mode): after a run that did run, nothing is open.
        if result != .finished {
            if pipeline.hasImplicitTransaction { violated("an implicit transaction is still open after a run of \(mode)") }
            if pipeline.pendingLayerCount != 0 { violated("\(pipeline.pendingLayerCount) layers still queued after a run of \(mode)") }
        }
    }

    // MARK: Invariants

    func checkBetweenSteps() {
        if Tracked.live.now != 0 { violated("\(Tracked.live.now) autoreleased objects alive with no pool open") }
        if pipeline.explicitTransactionDepth != 0 { violated("an explicit transaction left open") }
        for record in ports where record.delivered.now + record.port.pendingCount + record.dropped != record.sent {
            violated("port \(record.port.label): sent \(record.sent), delivered \(record.delivered.now), pending \(record.port.pendingCount), dropped \(record.dropped)")
        }
        for record in timers where !record.repeats && record.fired.now > 1 {
            violated("one-shot timer \(record.timer.label) fired \(record.fired.now) times")
        }
        if blocksRun.now > blocksQueued.now { violated("more blocks ran than were queued") }
        if submittedRun.now > submitted.now { violated("more submitted work ran than was submitted") }
    }

    /// Runs every concrete mode until its ports are empty, its signalled sources performed and
    /// its due timers fired, then checks nothing was lost.
    func drainAndCheck() {
        let latest = timers.filter { $0.timer.isValid }.map { $0.timer.nextFireDate }.max() ?? clock.now
        if latest > clock.now { clock.advance(to: latest) }
        for _ in 0..<64 {
            for mode in modes where mode != .common { loop.run(mode: mode, timeout: .zero) }
            checkBetweenSteps()
        }
        let concrete = modes.filter { $0 != .common }
        for record in ports where record.port.isValid && concrete.contains(where: { loop.contains(record.port, mode: $0) })
            && record.port.pendingCount != 0 {
            violated("port \(record.port.label) still holds \(record.port.pendingCount) messages after 64 passes of its modes")
        }
        for record in sources where record.pendingSignal && record.source.isValid
            && concrete.contains(where: { loop.contains(record.source, mode: $0) }) {
            violated("source \(record.source.label) was signalled and never performed")
        }
        for record in timers where !record.repeats && record.timer.isValid
            && concrete.contains(where: { loop.contains(record.timer, mode: $0) }) && record.timer.nextFireDate <= clock.now {
            violated("one-shot timer \(record.timer.label) was due and never fired")
        }
        if submittedRun.now != submitted.now { violated("submitted \(submitted.now), ran \(submittedRun.now)") }
        if blocksRun.now != blocksQueued.now { violated("blocks queued \(blocksQueued.now), ran \(blocksRun.now)") }
    }

    func checkTornDown() {
        for mode in modes {
            if sources.contains(where: { loop.contains($0.source, mode: mode) })
                || ports.contains(where: { loop.contains($0.port, mode: mode) })
                || timers.contains(where: { loop.contains($0.timer, mode: mode) })
                || observers.contains(where: { loop.contains($0, mode: mode) }) {
                violated("an item is still in mode \(mode) after teardown")
            }
        }
    }
}
