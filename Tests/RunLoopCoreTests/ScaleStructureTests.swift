import Synchronization
import Testing
@testable import RunLoopCore

/// The per-mode timer heap and signalled-source lists (issue 12, item 4) keep CF's order: a
/// model written here (a plain sorted list) says what must fire, and in which order.
@Suite("ScaleStructures")
struct ScaleStructureTests {
    /// A deterministic generator, so a failure names its seed.
    struct SplitMix {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
    }

    @Test("T2/T4 with 400 timers on 12 dates: random adds, moves and removals fire in (date, last insertion or move) order", arguments: [1, 2, 3, 4])
    func timerHeapKeepsInsertionOrder(seed: Int) throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        var random = SplitMix(state: UInt64(seed))
        // The model: per timer, its date (ms) and the step at which it was last added or moved.
        var model: [Int: (date: UInt64, step: Int)] = [:]
        var timers: [LoopTimer] = []
        for index in 0..<400 {
            let date = UInt64(10 + 5 * random.next(12))
            let timer = try LoopTimer(fireAt: at(ms: date), label: "t\(index)") { _ in trace.add("t\(index)") }
            timers.append(timer)
            loop.add(timer, mode: .default)
            model[index] = (date, index)
        }
        var step = 400
        for _ in 0..<300 {
            let index = random.next(timers.count)
            switch random.next(3) {
            case 0 where model[index] != nil:   // move: counts as inserted now (T2)
                let date = UInt64(10 + 5 * random.next(12))
                timers[index].setNextFireDate(at(ms: date))
                step += 1
                model[index] = (date, step)
            case 1 where model[index] != nil:   // remove
                loop.remove(timers[index], mode: .default)
                model[index] = nil
            case 2 where model[index] == nil:   // add back
                loop.add(timers[index], mode: .default)
                step += 1
                model[index] = (timers[index].nextFireDate.ms, step)
            default:
                break
            }
        }
        let expected = model.sorted { ($0.value.date, $0.value.step) < ($1.value.date, $1.value.step) }.map { "t\($0.key)" }
        if let first = model.values.map(\.date).min() {
            #expect(loop.nextTimerFireDate(in: .default) == at(ms: first))
        }
        #expect(loop.run(mode: .default, timeout: .seconds(1)) == .finished)
        #expect(trace.all == expected, "seed \(seed)")
        #expect(clock.now == at(ms: model.values.map(\.date).max() ?? 0))
        for timer in timers { timer.invalidate() }
    }

    @Test("S2 with 2,000 idle sources0: the signalled ones run in (order, signal) order, a nested run of the mode performs what the outer pass took but has not performed, rash leaves the rest signalled")
    func signalledListKeepsCFOrder() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        var sources: [LoopSource] = []
        for index in 0..<2000 {
            let source = LoopSource(order: index % 3, label: "s\(index)") { trace.add("s\(index)") }
            sources.append(source)
            loop.add(source, mode: .default)
        }
        // Signal order 1500, 7, 301, 2 — orders 0, 1, 1, 2: CF performs 1500, 7, 301, 2.
        for index in [1500, 7, 301, 2] { sources[index].signal() }
        #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["s1500"])
        #expect(sources[7].isSignalled && sources[301].isSignalled && sources[2].isSignalled)
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        #expect(trace.all == ["s1500", "s7", "s301", "s2"])

        // A perform that runs the mode again: the nested pass performs the still-signalled
        // sources the outer pass took, and the outer pass then skips them (S2, as CF's scan).
        trace.reset()
        let nester = LoopSource(order: -1, label: "nester") {
            trace.add("nester")
            loop.run(mode: .default, timeout: 0)
            trace.add("nested run returned")
        }
        loop.add(nester, mode: .default)
        nester.signal()
        sources[10].signal()
        sources[11].signal()
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        #expect(trace.all == ["nester", "s10", "s11", "nested run returned"])

        // A source signalled before it joins a second mode is signalled there too; performing
        // it in one mode clears it for both.
        trace.reset()
        sources[20].signal()
        loop.add(sources[20], mode: .tracking)
        #expect(loop.run(mode: .tracking, timeout: 0) == .timedOut)
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        #expect(trace.all == ["s20"])
        // Removed while signalled: never performed in that mode.
        sources[21].signal()
        loop.remove(sources[21], mode: .default)
        #expect(loop.run(mode: .default, timeout: 0) == .timedOut)
        #expect(trace.all == ["s20"])
        #expect(sources[21].isSignalled)
    }

    @Test("A timer with tolerance that leaves its mode is released: the wake-up computation keeps no reference to it")
    func timerWithToleranceIsReleasedAfterRemoval() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        final class Payload {}
        weak var payload: Payload?
        do {
            let captured = Payload()
            payload = captured
            let timer = try LoopTimer(fireAt: LoopInstant(nanoseconds: 50_000_000), interval: .milliseconds(50),
                                      tolerance: .milliseconds(25), label: "idle", loop.ownerThreadCallout { _ in _ = captured })
            loop.add(timer, mode: .default)
            loop.run(mode: .default, timeout: 0)   // the pass computes the wake-up deadline
            timer.invalidate()
        }
        loop.run(mode: .default, timeout: 0)
        #expect(payload == nil, "the removed timer (and what its callout captured) is still referenced")
    }

    @Test("A run without a timeout and without timers reads no clock: 200 passes that each perform a source, no reading")
    func runWithoutTimeoutReadsNoClock() {
        let clock = ManualClock()   // counts its readings
        let loop = Loop(clock: clock)
        defer { loop.tearDown() }
        final class Passes { var performed = 0; var source: LoopSource? }   // the loop's thread only
        let passes = Passes()
        let source = LoopSource(label: "again", onOwnerThreadOf: loop) {
            passes.performed += 1
            if passes.performed == 200 { loop.stop() } else { passes.source?.signal() }
        }
        passes.source = source
        loop.add(source, mode: .default)
        source.signal()
        let before = clock.readingCount
        loop.run()
        #expect(passes.performed == 200)
        #expect(clock.readingCount - before == 0, "the passes of a run without a deadline read the clock")
        passes.source = nil
    }
}
