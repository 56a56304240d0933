#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import PThreads
import RunLoopTesting
import Testing

/// Recording a workload and replaying it: identical traces, the first divergence, external inputs.
@Suite("Replay: record and replay")
struct ReplayRecordingTests {
    /// A timer at 5 ms, a source signalled from a block, and a port message: three kinds of input.
    static func workload(timerAt milliseconds: Int64) -> (ReplayRecorder) throws -> Void {
        { recorder in
            let loop = recorder.loop
            let source = LoopSource(label: "s0") {}
            let port = try LoopPortSource(label: "port") { _ in }
            let timer = try LoopTimer(fireAt: recorder.clock.now.advanced(by: .milliseconds(milliseconds)), label: "t0") { _ in }
            loop.add(source, mode: .default)
            loop.add(port, mode: .default)
            loop.add(timer, mode: .default)
            loop.perform(inMode: .default, label: "b0") { recorder.signal(source) }
            try recorder.send([7], to: port)
            loop.run(mode: .default, timeout: 0.02)
            source.invalidate()
            port.invalidate()
        }
    }

    @Test("A recorded workload replays to the same trace, also after writing and reading the file")
    func replayMatches() throws {
        let trace = try TraceReplay.record(observeActivities: true, Self.workload(timerAt: 5))
        let kinds = trace.entries.map(\.kind)
        #expect(kinds.contains(.calloutBegin(.timer, label: "t0")))
        #expect(kinds.contains(.input(ReplayInput(.signal(label: "s0"), origin: .loop))))
        #expect(kinds.contains(.input(ReplayInput(.send(label: "port", payload: "bytes:07"), origin: .loop))))
        #expect(kinds.contains(.activity("BW")))

        let outcome = try TraceReplay.replay(try ReplayTrace(parsing: trace.text), observeActivities: true,
                                             workload: Self.workload(timerAt: 5))
        #expect(outcome.matches, "\(outcome)")
        #expect(outcome.actual == trace)
    }

    @Test("A workload that changed is reported at the first differing line, with both entries and the pass")
    func firstDivergence() throws {
        let trace = try ReplayTrace(parsing: try TraceReplay.record(Self.workload(timerAt: 5)).text)
        let outcome = try TraceReplay.replay(trace, workload: Self.workload(timerAt: 7))
        let divergence = try #require(outcome.divergence)
        // The timer fires 2 ms later: the first entry that differs is the wake that ends the
        // wait which jumped to the timer's fire date (5 ms then, 7 ms now).
        let expected = try #require(divergence.expected)
        let actual = try #require(divergence.actual)
        #expect(expected.hasPrefix("wake ") && expected.contains(" t=5000000"), "\(divergence)")
        #expect(actual.hasPrefix("wake ") && actual.contains(" t=7000000"), "\(divergence)")
        #expect(trace.entries[divergence.entryIndex].line == expected)
        #expect(divergence.line == trace.line(ofEntry: divergence.entryIndex))
        #expect(divergence.pass == trace.entries[divergence.entryIndex].pass)
        #expect(trace.entries[..<divergence.entryIndex] == outcome.actual.entries[..<divergence.entryIndex])
    }

    @Test("A replay that ends early is reported at the recording's next line")
    func replayEndsEarly() throws {
        let trace = try TraceReplay.record(Self.workload(timerAt: 5))
        let outcome = try TraceReplay.replay(trace) { _ in }
        let divergence = try #require(outcome.divergence)
        #expect(divergence.entryIndex == 0)
        #expect(divergence.line == 3)
        #expect(divergence.actual == nil)
        #expect(divergence.description.contains("got the end of the replay"))
    }

    @Test("An input made on another thread while the loop waits is re-applied by the replay at the same pass")
    func externalInputReplays() throws {
        let workload: (ReplayRecorder) throws -> Void = { recorder in
            let loop = recorder.loop
            let source = LoopSource(label: "from-outside") {}
            recorder.register(source)
            loop.add(source, mode: .default)
            // No deadline: on the virtual clock the wait blocks until something wakes it.
            var producer: pthread_t?
            if !recorder.isReplaying {
                producer = startPThread(name: "producer") {
                    guard loop.waitUntilWaiting(timeout: .seconds(10)) else {
                        Issue.record("the loop did not start waiting within 10 s")
                        loop.stop()
                        return
                    }
                    recorder.signal(source)
                    recorder.wakeUp()
                }
            }
            let result = loop.run(mode: .default, timeout: .infinity, returnAfterSourceHandled: true)
            if let producer { pthread_join(producer, nil) }
            source.invalidate()
            #expect(result == .handledSource, "the loop was not woken by the producer's signal")
        }
        let trace = try TraceReplay.record(workload)
        let inputs = trace.entries.compactMap { entry -> ReplayInput? in
            if case .input(let input) = entry.kind { return input }
            return nil
        }
        #expect(inputs == [ReplayInput(.signal(label: "from-outside"), origin: .external),
                           ReplayInput(.wakeUp, origin: .external)])

        let outcome = try TraceReplay.replay(try ReplayTrace(parsing: trace.text), workload: workload)
        #expect(outcome.matches, "\(outcome)")
    }

    @Test("Inputs made on the items themselves, on the loop's thread and on another, are recorded with their pass and origin")
    func inputsWithoutTheRecorder() throws {
        let workload: (ReplayRecorder) throws -> Void = { recorder in
            let loop = recorder.loop
            let inside = LoopSource(label: "inside") {}
            let outside = LoopSource(label: "outside") {}
            let port = try LoopPortSource(label: "port") { _ in }
            recorder.register(outside)            // only so a replay can re-apply its signal
            for item in [inside, outside] { loop.add(item, mode: .default) }
            loop.add(port, mode: .default)
            try port.send([3])                    // between runs: pass 0, the loop's thread
            loop.perform(inMode: .default, label: "b0") { inside.signal() }   // from a callout
            loop.run(mode: .default, timeout: 0)
            var producer: pthread_t?
            if !recorder.isReplaying {
                producer = startPThread(name: "producer") {
                    guard loop.waitUntilWaiting(timeout: .seconds(10)) else {
                        Issue.record("the loop did not start waiting within 10 s")
                        loop.stop()
                        return
                    }
                    outside.signal()
                    loop.wakeUp()
                }
            }
            let result = loop.run(mode: .default, timeout: .infinity, returnAfterSourceHandled: true)
            if let producer { pthread_join(producer, nil) }
            #expect(result == .handledSource, "the loop was not woken by the other thread's signal")
            for item in [inside, outside] { item.invalidate() }
            port.invalidate()
        }
        let trace = try TraceReplay.record(workload)
        let lines = trace.text.split(separator: "\n").map(String.init)
        let inputs = lines.filter { $0.hasPrefix("signal ") || $0.hasPrefix("send ") || $0.hasPrefix("wakeup ") }
        #expect(inputs.count == 4, "\(inputs)")
        #expect(inputs.first == #"send p=0 m="" t=0 from=loop label="port" payload="bytes:03""#)
        // The block runs in the first pass of the first run.
        #expect(inputs.dropFirst().first == #"signal p=1 m="kCFRunLoopDefaultMode" t=0 from=loop label="inside""#)
        // The other thread's inputs sit right after the sleep of the wait they ended, with its pass.
        let external = try #require(lines.firstIndex { $0.contains("from=external") })
        let sleep = lines[external - 1]
        #expect(sleep.hasPrefix("sleep "), "\(sleep)")
        let sleepPass = sleep.split(separator: " ")[1]
        #expect(lines[external] == #"signal \#(sleepPass) m="kCFRunLoopDefaultMode" t=0 from=external label="outside""#)
        #expect(lines[external + 1] == #"wakeup \#(sleepPass) m="kCFRunLoopDefaultMode" t=0 from=external"#)

        let outcome = try TraceReplay.replay(try ReplayTrace(parsing: trace.text), workload: workload)
        #expect(outcome.matches, "\(outcome)")
    }

    @Test("A block another thread enqueues is a perform input after the wait's sleep, and a replay enqueues the registered block there")
    func blockFromAnotherThread() throws {
        let workload: (ReplayRecorder) throws -> Void = { recorder in
            let loop = recorder.loop
            let keepAlive = LoopSource(label: "keepAlive") {}   // a mode with a source waits instead of finishing
            loop.add(keepAlive, mode: .default)
            recorder.registerBlock("reply", calloutLabel: "completionHandler") { loop.stop() }
            var network: pthread_t?
            if !recorder.isReplaying {
                network = startPThread(name: "network") {
                    guard loop.waitUntilWaiting(timeout: .seconds(10)) else {
                        Issue.record("the loop did not start waiting within 10 s")
                        loop.stop()
                        return
                    }
                    #expect(recorder.performAndWake("reply"))
                }
            }
            let result = loop.run(mode: .default, timeout: .infinity)
            if let network { pthread_join(network, nil) }
            #expect(result == .stopped, "the other thread's block did not stop the run")
            keepAlive.invalidate()
        }
        let trace = try TraceReplay.record(workload)
        let lines = trace.text.split(separator: "\n").map(String.init)
        let perform = try #require(lines.firstIndex { $0.hasPrefix("perform ") }, "\(lines)")
        #expect(lines[perform - 1].hasPrefix("sleep "), "\(lines)")
        #expect(lines[perform].hasSuffix(#"from=external label="reply""#), "\(lines)")
        #expect(lines[perform + 1].hasPrefix("wakeup ") && lines[perform + 1].hasSuffix("from=external"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("callout ") && $0.hasSuffix(#"c=block label="completionHandler""#) }, "\(lines)")

        let outcome = try TraceReplay.replay(try ReplayTrace(parsing: trace.text), workload: workload)
        #expect(outcome.matches, "\(outcome)")
    }

    @Test("An external input naming a source the replay does not know is reported, not dropped")
    func unknownExternalSource() throws {
        let text = """
            runloopkit-trace 1
            clock start=0
            run-begin p=0 m="kCFRunLoopDefaultMode" t=0
            sleep p=1 m="kCFRunLoopDefaultMode" t=0
            signal p=1 m="kCFRunLoopDefaultMode" t=0 from=external label="ghost"
            wakeup p=1 m="kCFRunLoopDefaultMode" t=0 from=external
            wake p=1 m="kCFRunLoopDefaultMode" t=0
            sleep p=2 m="kCFRunLoopDefaultMode" t=0
            wake p=2 m="kCFRunLoopDefaultMode" t=1000000000
            run-end p=2 m="kCFRunLoopDefaultMode" t=1000000000 result=timedOut
            end entries=8
            """
        let outcome = try TraceReplay.replay(try ReplayTrace(parsing: text)) { recorder in
            let keeper = LoopSource(label: "keeper") {}
            recorder.loop.add(keeper, mode: .default)
            // A deadline: the wait after the injected wake-up jumps to it instead of blocking.
            recorder.loop.run(mode: .default, timeout: 1, returnAfterSourceHandled: true)
            keeper.invalidate()
        }
        #expect(outcome.problems == ["an external signal names source \"ghost\", which the workload did not register"])
        #expect(!outcome.matches)
    }

    @Test("fd readiness and clock advances made through the recorder are inputs; explain links the fd callout to its readiness")
    func fileReadinessAndAdvance() throws {
        var descriptors: [Int32] = [-1, -1]
        try #require(pipe(&descriptors) == 0, "pipe() failed: errno \(errno)")
        defer { descriptors.forEach { _ = close($0) } }
        let (readEnd, writeEnd) = (descriptors[0], descriptors[1])
        let workload: (ReplayRecorder) throws -> Void = { recorder in
            let loop = recorder.loop
            let file = LoopFileSource(fd: readEnd, events: .readable, label: "pipe") { _ in
                var byte: UInt8 = 0
                _ = read(readEnd, &byte, 1)   // drain, so the level-triggered source goes quiet
            }
            loop.add(file, mode: .default)
            try recorder.advance(by: .milliseconds(3))
            recorder.fileReady(file, events: .readable) {
                var byte: UInt8 = 1
                #expect(write(writeEnd, &byte, 1) == 1, "write to the pipe failed: errno \(errno)")
            }
            loop.run(mode: .default, timeout: .milliseconds(1), returnAfterSourceHandled: true)
            file.invalidate()
        }
        let trace = try TraceReplay.record(workload)
        let lines = trace.text.split(separator: "\n").map(String.init)
        #expect(lines.contains("advance p=0 m=\"\" t=0 from=loop by=3000000"))
        #expect(lines.contains("file-ready p=0 m=\"\" t=3000000 from=loop label=\"pipe\" events=1"))
        #expect(lines.contains { $0.hasPrefix("callout ") && $0.hasSuffix(" t=3000000 c=fileSource label=\"pipe\"") })

        let explanation = try #require(TraceExplainer.explain(trace).first { $0.label == "pipe" })
        #expect(explanation.rules == ["S8", "L-c"])
        #expect(explanation.waitedFor == "its descriptor's readiness at line 4 (pass 0, from the loop's thread)")

        let outcome = try TraceReplay.replay(try ReplayTrace(parsing: trace.text), workload: workload)
        #expect(outcome.matches, "\(outcome)")
    }

    @Test("A replay whose loop waits with nothing to end the wait is stopped at the stall limit and says so")
    func stalledReplayIsStopped() throws {
        let waitsForever: (ReplayRecorder) throws -> Void = { recorder in
            let keeper = LoopSource(label: "keeper") {}
            recorder.loop.add(keeper, mode: .default)
            recorder.loop.run(mode: .default, timeout: .infinity)
            keeper.invalidate()
        }
        let empty = ReplayTrace(clockStart: .zero, entries: [])
        let outcome = try TraceReplay.replay(empty, stallLimit: .milliseconds(200), workload: waitsForever)
        #expect(outcome.problems.first?.hasPrefix("the loop was still running after 0.2 seconds of real time and was stopped") == true,
                "\(outcome.problems)")
        #expect(outcome.actual.entries.last?.kind == .runEnd(result: "stopped"))
        #expect(throws: ReplayRecorderError.self) { try TraceReplay.record(stallLimit: .milliseconds(200), waitsForever) }
    }

    @Test("A recorder that dropped events refuses to give a trace")
    func droppedEventsThrow() {
        let clock = VirtualClock()
        let loop = Loop(clock: clock)
        defer { loop.tearDown() }
        let recorder = ReplayRecorder(loop: loop, clock: clock, observeActivities: true, capacity: 2)
        loop.perform(inMode: .default, label: "b") {}
        loop.run(mode: .default, timeout: 0)
        #expect(throws: ReplayRecorderError.self) { try recorder.trace() }
        loop.eventSink = nil
    }
}
