import RunLoopTesting
import Testing

/// The trace file format: what it writes, that it reads it back, and how it refuses bad files.
@Suite("Replay: trace file format")
struct ReplayTraceFormatTests {
    /// One entry of every kind version 1 has, written by hand in a version 1 file.
    static let everyKind = """
        runloopkit-trace 1
        clock start=1000
        # a comment, and a blank line, are skipped

        signal p=0 m="" t=1000 from=loop label="s \\"zero\\""
        run-begin p=0 m="kCFRunLoopDefaultMode" t=1000
        activity p=1 m="kCFRunLoopDefaultMode" t=1000 a=BW
        sleep p=1 m="kCFRunLoopDefaultMode" t=1000
        send p=1 m="kCFRunLoopDefaultMode" t=1000 from=external label="port" payload="bytes:01ff"
        wakeup p=1 m="kCFRunLoopDefaultMode" t=1000 from=external
        wake p=1 m="kCFRunLoopDefaultMode" t=1000
        callout p=1 m="kCFRunLoopDefaultMode" t=1000 c=source1 label="port"
        advance p=1 m="kCFRunLoopDefaultMode" t=1000 from=loop by=5
        file-ready p=1 m="kCFRunLoopDefaultMode" t=1005 from=loop label="fd" events=1
        log p=1 m="kCFRunLoopDefaultMode" t=1005 text="two\\nlines"
        mark p=1 m="kCFRunLoopDefaultMode" t=1005 name="dirty"
        pool p=1 m="kCFRunLoopDefaultMode" t=1005 op=popAndPush
        commit p=1 m="kCFRunLoopDefaultMode" t=1005 frame=3 reason="BeforeWaiting"
        lag p=1 m="kCFRunLoopDefaultMode" t=1005 label="port"
        return p=1 m="kCFRunLoopDefaultMode" t=1005 c=source1 label="port"
        run-end p=1 m="kCFRunLoopDefaultMode" t=1005 result=handledSource
        end entries=17
        """

    @Test("Every kind of line reads into the entry it names, and is written back the same way")
    func everyKindRoundTrips() throws {
        let trace = try ReplayTrace(parsing: Self.everyKind)
        #expect(trace.clockStart == LoopInstant(nanoseconds: 1000))
        #expect(trace.entries.count == 17)
        #expect(trace.entries[0] == ReplayTraceEntry(.input(ReplayInput(.signal(label: "s \"zero\""), origin: .loop)),
                                                     pass: 0, mode: "", time: LoopInstant(nanoseconds: 1000)))
        #expect(trace.entries[4].kind == .input(ReplayInput(.send(label: "port", payload: "bytes:01ff"), origin: .external)))
        #expect(trace.entries[7].kind == .calloutBegin(.source1, label: "port"))
        #expect(trace.entries[8].kind == .input(ReplayInput(.advance(nanoseconds: 5), origin: .loop)))
        #expect(trace.entries[9].kind == .input(ReplayInput(.fileReady(label: "fd", events: 1), origin: .loop)))
        #expect(trace.entries[10].kind == .log("two\nlines"))
        #expect(trace.entries[13].kind == .commit(frame: 3, reason: "BeforeWaiting"))
        #expect(trace.entries[16].kind == .runEnd(result: "handledSource"))
        // Entries keep the line they came from (comments and blank lines counted).
        #expect(trace.line(ofEntry: 0) == 5)
        #expect(trace.line(ofEntry: 16) == 21)

        // Written back as version 2 (a version 1 file is read as it is): the same lines without
        // the comment and the blank line.
        let expectedText = (["runloopkit-trace 2"] + Self.everyKind.split(separator: "\n", omittingEmptySubsequences: false)
            .dropFirst().filter { !$0.hasPrefix("#") && !$0.isEmpty }).joined(separator: "\n") + "\n"
        #expect(trace.text == expectedText)
        #expect(try ReplayTrace(parsing: trace.text) == trace)
    }

    @Test("Version 2's block from another thread: perform, with its origin and the label the workload gave it")
    func performRoundTrips() throws {
        let text = #"""
            runloopkit-trace 2
            clock start=0
            sleep p=1 m="kCFRunLoopDefaultMode" t=10
            perform p=1 m="kCFRunLoopDefaultMode" t=12 from=external label="response \\ \"a\""
            wakeup p=1 m="kCFRunLoopDefaultMode" t=13 from=external
            wake p=1 m="kCFRunLoopDefaultMode" t=15
            end entries=4

            """#
        let trace = try ReplayTrace(parsing: text)
        #expect(trace.entries[1] == ReplayTraceEntry(.input(ReplayInput(.perform(label: #"response \ "a""#), origin: .external)),
                                                     pass: 1, mode: "kCFRunLoopDefaultMode", time: LoopInstant(nanoseconds: 12)))
        #expect(trace.text == text)
    }

    /// Each malformed file and the line, field and words of the error it must get.
    static let malformed: [(name: String, text: String, line: Int, field: String?, mentions: String)] = [
        ("empty file", "", 1, nil, "empty file"),
        ("only comments", "# nothing\n\n", 2, nil, "empty file"),
        ("another format", "{\"json\": true}\n", 1, "magic", "not a RunLoopKit trace"),
        ("newer version", "runloopkit-trace 3\nclock start=0\nend entries=0\n", 1, "version", "version 3 is not supported (this reader reads 1 and 2)"),
        ("perform in a version 1 file", "runloopkit-trace 1\nclock start=0\nperform p=1 m=\"\" t=0 from=external label=\"r\"\nend entries=1\n",
         3, "kind", "kind \"perform\" (a block from another thread) is new in version 2; this file says version 1"),
        ("perform without a label", "runloopkit-trace 2\nclock start=0\nperform p=1 m=\"\" t=0 from=external\nend entries=1\n",
         3, "label", "missing field \"label=\""),
        ("perform with an unquoted label", "runloopkit-trace 2\nclock start=0\nperform p=1 m=\"\" t=0 from=external label=r\nend entries=1\n",
         3, "label", "quoted string"),
        ("perform without an origin", "runloopkit-trace 2\nclock start=0\nperform p=1 m=\"\" t=0 label=\"r\"\nend entries=1\n",
         3, "from", "missing field \"from=\""),
        ("perform with a closure field", "runloopkit-trace 2\nclock start=0\nperform p=1 m=\"\" t=0 from=external label=\"r\" block=\"{}\"\nend entries=1\n",
         3, "block", "unknown field \"block\""),
        ("version missing", "runloopkit-trace\n", 1, "version", "expected a version number"),
        ("no clock line", "runloopkit-trace 1\n", 1, nil, "truncated"),
        ("clock line misplaced", "runloopkit-trace 1\nwake p=0 m=\"\" t=0\n", 2, "kind", "expected the clock line"),
        ("truncated: no end line", "runloopkit-trace 1\nclock start=0\nwake p=0 m=\"\" t=0\n", 3, nil, "truncated"),
        ("truncated: end count differs", "runloopkit-trace 1\nclock start=0\nwake p=0 m=\"\" t=0\nend entries=2\n",
         4, "entries", "counts 2 entries but the file holds 1"),
        ("unknown kind", "runloopkit-trace 1\nclock start=0\nexplode p=0 m=\"\" t=0\nend entries=1\n", 3, "kind", "unknown entry kind \"explode\""),
        ("missing time", "runloopkit-trace 1\nclock start=0\nwake p=0 m=\"\"\nend entries=1\n", 3, "t", "missing field"),
        ("negative time", "runloopkit-trace 1\nclock start=0\nwake p=0 m=\"\" t=-5\nend entries=1\n", 3, "t", "non-negative integer"),
        ("quoted number", "runloopkit-trace 1\nclock start=0\nwake p=\"1\" m=\"\" t=0\nend entries=1\n", 3, "p", "non-negative integer"),
        ("unquoted label", "runloopkit-trace 1\nclock start=0\ncallout p=1 m=\"\" t=0 c=timer label=t0\nend entries=1\n",
         3, "label", "quoted string"),
        ("unterminated string", "runloopkit-trace 1\nclock start=0\nlog p=1 m=\"\" t=0 text=\"oops\nend entries=1\n",
         3, "text", "unterminated string"),
        ("unknown escape", "runloopkit-trace 1\nclock start=0\nlog p=1 m=\"\" t=0 text=\"a\\tb\"\nend entries=1\n",
         3, "text", "unknown escape"),
        ("unknown field", "runloopkit-trace 1\nclock start=0\nwake p=0 m=\"\" t=0 colour=red\nend entries=1\n",
         3, "colour", "unknown field"),
        ("field twice", "runloopkit-trace 1\nclock start=0\nwake p=0 p=1 m=\"\" t=0\nend entries=1\n", 3, "p", "appears twice"),
        ("field without value", "runloopkit-trace 1\nclock start=0\nwake p=0 m=\"\" t\nend entries=1\n", 3, "t", "expected \"t=VALUE\""),
        ("unknown callout kind", "runloopkit-trace 1\nclock start=0\ncallout p=1 m=\"\" t=0 c=gizmo label=\"x\"\nend entries=1\n",
         3, "c", "unknown callout kind \"gizmo\""),
        ("unknown origin", "runloopkit-trace 1\nclock start=0\nwakeup p=1 m=\"\" t=0 from=mars\nend entries=1\n",
         3, "from", "\"loop\" or \"external\""),
        ("text after the end", "runloopkit-trace 1\nclock start=0\nend entries=0\nwake p=0 m=\"\" t=0\n", 4, nil, "after the end line"),
    ]

    @Test("A malformed file gets an error naming its line and field", arguments: 0..<malformed.count)
    func malformedFileIsRefused(_ index: Int) {
        let bad = Self.malformed[index]
        do {
            let trace = try ReplayTrace(parsing: bad.text)
            Issue.record("\(bad.name): read as \(trace.entries.count) entries instead of being refused")
        } catch {
            #expect(error.line == bad.line, "\(bad.name): \(error)")
            #expect(error.field == bad.field, "\(bad.name): \(error)")
            #expect(error.message.contains(bad.mentions), "\(bad.name): \(error)")
        }
    }

    @Test("The error text names the line and the field")
    func errorDescription() {
        #expect(ReplayTraceError(line: 3, field: "t", message: "missing field \"t=\"").description
                == "line 3, field \"t\": missing field \"t=\"")
        #expect(ReplayTraceError(line: 1, field: nil, message: "empty file").description == "line 1: empty file")
    }
}
