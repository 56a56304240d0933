#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RunLoopTesting
import Testing

/// `runloopkit explain`'s logic: each callout's rules and what it waited for.
@Suite("Replay: explaining a trace")
struct ReplayExplainTests {
    /// A hand-written trace: an observer on BS, a block, a signalled source0, a port message
    /// from another thread, and a timer the wait jumped to.
    static let text = """
        runloopkit-trace 1
        clock start=0
        signal p=0 m="" t=0 from=loop label="s0"
        run-begin p=0 m="kCFRunLoopDefaultMode" t=0
        activity p=1 m="kCFRunLoopDefaultMode" t=0 a=BS
        callout p=1 m="kCFRunLoopDefaultMode" t=0 c=observer label="o1"
        return p=1 m="kCFRunLoopDefaultMode" t=0 c=observer label="o1"
        callout p=1 m="kCFRunLoopDefaultMode" t=0 c=block label="b0"
        return p=1 m="kCFRunLoopDefaultMode" t=0 c=block label="b0"
        callout p=1 m="kCFRunLoopDefaultMode" t=0 c=source0 label="s0"
        return p=1 m="kCFRunLoopDefaultMode" t=0 c=source0 label="s0"
        callout p=1 m="kCFRunLoopDefaultMode" t=0 c=block label="b1"
        return p=1 m="kCFRunLoopDefaultMode" t=0 c=block label="b1"
        sleep p=2 m="kCFRunLoopDefaultMode" t=0
        send p=2 m="kCFRunLoopDefaultMode" t=0 from=external label="port" payload="bytes:01"
        wake p=2 m="kCFRunLoopDefaultMode" t=0
        callout p=2 m="kCFRunLoopDefaultMode" t=0 c=source1 label="port"
        return p=2 m="kCFRunLoopDefaultMode" t=0 c=source1 label="port"
        sleep p=3 m="kCFRunLoopDefaultMode" t=0
        wake p=3 m="kCFRunLoopDefaultMode" t=5000000
        callout p=3 m="kCFRunLoopDefaultMode" t=5000000 c=timer label="t0"
        return p=3 m="kCFRunLoopDefaultMode" t=5000000 c=timer label="t0"
        callout p=4 m="kCFRunLoopDefaultMode" t=5000000 c=source0 label="s0"
        return p=4 m="kCFRunLoopDefaultMode" t=5000000 c=source0 label="s0"
        run-end p=4 m="kCFRunLoopDefaultMode" t=5000000 result=timedOut
        end entries=23
        """

    @Test("A block another thread enqueued is named, with the line of its perform input")
    func explainsABlockFromAnotherThread() throws {
        let trace = try ReplayTrace(parsing: """
            runloopkit-trace 2
            clock start=0
            run-begin p=0 m="kCFRunLoopDefaultMode" t=0
            sleep p=1 m="kCFRunLoopDefaultMode" t=0
            perform p=1 m="kCFRunLoopDefaultMode" t=5 from=external label="reply"
            wakeup p=1 m="kCFRunLoopDefaultMode" t=6 from=external
            wake p=1 m="kCFRunLoopDefaultMode" t=9
            activity p=1 m="kCFRunLoopDefaultMode" t=9 a=AW
            callout p=1 m="kCFRunLoopDefaultMode" t=9 c=block label="completionHandler"
            return p=1 m="kCFRunLoopDefaultMode" t=9 c=block label="completionHandler"
            callout p=2 m="kCFRunLoopDefaultMode" t=9 c=block label="own"
            return p=2 m="kCFRunLoopDefaultMode" t=9 c=block label="own"
            run-end p=2 m="kCFRunLoopDefaultMode" t=9 result=stopped
            end entries=11
            """)
        #expect(TraceExplainer.explain(trace).map(\.waitedFor) == [
            "the block point after the end of the pass in pass 1; the oldest block another thread enqueued that has not run yet"
                + " is \"reply\" at line 5 (pass 1, from another thread)",
            "the block point after the end of the pass in pass 2",
        ])
    }

    @Test("Each callout gets its rule ids and what it waited for, naming the lines of its causes")
    func explainsEachCallout() throws {
        let explanations = TraceExplainer.explain(try ReplayTrace(parsing: Self.text))
        #expect(explanations.map(\.label) == ["o1", "b0", "s0", "b1", "port", "t0", "s0"])
        #expect(explanations.map(\.line) == [6, 8, 10, 12, 17, 21, 23])
        #expect(explanations.map(\.rules) == [["O4", "O1"], ["B3"], ["S2"], ["B3"], ["S8", "L-c"], ["T4", "L-b"], ["S2"]])
        #expect(explanations.map(\.waitedFor) == [
            "activity BS at line 5 (pass 1); observers of one activity run in order",
            "the block point after BeforeSources in pass 1",
            "its signal at line 3 (pass 0, from the loop's thread)",
            "the block point after the sources0 of the pass in pass 1",
            "the message sent at line 15 (pass 2, from another thread); one port message is handled per pass",
            "its fire date, due at or before t=5000000 ns: the wait of pass 3 moved the clock from 0 to 5000000 ns (line 20)",
            "a signal made before pass 4 by code the trace does not show as an input"
                + " (another callout, or a re-signal inside its own perform, S3);"
                + " the latest callout before it was timer \"t0\" at line 21",
        ])
    }

    @Test("Every rule id an explanation cites has a title")
    func everyCitedRuleHasATitle() throws {
        for explanation in TraceExplainer.explain(try ReplayTrace(parsing: Self.text)) {
            for rule in explanation.rules { #expect(TraceExplainer.ruleTitles[rule] != nil, "\(rule) has no title") }
        }
    }

    @Test("The text form shows the line, pass, time, mode, callout, rules and cause")
    func textForm() throws {
        let text = TraceExplainer.text(try ReplayTrace(parsing: Self.text))
        let timer = """
            line 21  pass 3  t=5000000 ns  kCFRunLoopDefaultMode  timer "t0"
                rules: T4 (all overdue timers in one pass), L-b (timers fire only after a wait)
                waited for: its fire date, due at or before t=5000000 ns: the wait of pass 3 moved the clock from 0 to 5000000 ns (line 20)
            """
        #expect(text.contains(timer), "\(text)")
        #expect(TraceExplainer.text(ReplayTrace(clockStart: .zero, entries: [])) == "no callouts in this trace (0 entries)\n")
    }

    @Test("A trace file is written and read back; a missing, binary or malformed file is refused with its path")
    func traceFiles() throws {
        let directory = "/tmp/runloopkit-replay-tests-\(getpid())"
        defer {
            for name in ["good.rlktrace", "bad.rlktrace"] { unlink("\(directory)/\(name)") }
            rmdir(directory)
        }
        let trace = try ReplayTrace(parsing: Self.text)
        try trace.write(to: "\(directory)/good.rlktrace")
        #expect(try ReplayTrace(contentsOfFile: "\(directory)/good.rlktrace") == trace)

        #expect(throws: ReplayTraceFileError.cannotRead(path: "\(directory)/missing", errno: ENOENT)) {
            try ReplayTrace(contentsOfFile: "\(directory)/missing")
        }
        try OutputFile.write("runloopkit-trace 1\nclock start=zero\n", to: "\(directory)/bad.rlktrace")
        let expected = ReplayTraceFileError.malformed(path: "\(directory)/bad.rlktrace",
            ReplayTraceError(line: 2, field: "start", message: "expected a non-negative integer, found \"zero\""))
        #expect(throws: expected) { try ReplayTrace(contentsOfFile: "\(directory)/bad.rlktrace") }
        #expect(expected.description == "\(directory)/bad.rlktrace: line 2, field \"start\": expected a non-negative integer, found \"zero\"")
    }
}
