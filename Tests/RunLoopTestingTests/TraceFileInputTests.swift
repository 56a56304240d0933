import LoopScenarios
import RunLoopTesting
import ScenarioReplay
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 28, item 5: `runloopkit replay` and `explain` read their FILE with limits — what is not
/// a regular file, a file over 64 MiB, a line over 64 KiB are refused with one line before they
/// are read; CRLF is read; a long diverging line is printed cut, with its length.
@Suite("TraceFileInput")
struct TraceFileInputTests {
    /// A fresh path under the temporary directory, removed by the caller.
    private func temporaryPath(_ name: String) -> String {
        "/tmp/rlk-trace-input-\(getpid())-\(name)"
    }

    private func write(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0, "open \(path): errno \(errno)")
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            try #require(count > 0, "write \(path): errno \(errno)")
            offset += count
        }
    }

    private func recordedTrace() throws -> String {
        let scenario = try #require(ScenarioCatalog.named("seed-code1-source0"))
        return ReplayTrace(scenario: scenario.run()).text
    }

    @Test("a FIFO with no writer, /dev/zero and a directory are refused without reading")
    func nonRegularFilesAreRefused() throws {
        let fifo = temporaryPath("fifo")
        unlink(fifo)
        try #require(mkfifo(fifo, 0o600) == 0, "mkfifo: errno \(errno)")
        defer { unlink(fifo) }
        #expect(throws: TraceFileInputError.notRegularFile(path: fifo, kind: "a FIFO")) { try TraceFileInput.read(fifo) }
        #expect(throws: TraceFileInputError.notRegularFile(path: "/dev/zero", kind: "a character device")) {
            try TraceFileInput.read("/dev/zero")
        }
        #expect(throws: TraceFileInputError.notRegularFile(path: "/tmp", kind: "a directory")) { try TraceFileInput.read("/tmp") }
        let refusal = TraceFileInputError.notRegularFile(path: "/dev/zero", kind: "a character device").description
        #expect(refusal == "/dev/zero is a character device, not a trace file; refused without reading")
    }

    @Test("a file over 64 MiB is refused by its size, before it is read")
    func largeFileIsRefused() throws {
        let path = temporaryPath("large")
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { unlink(path) }
        #expect(ftruncate(fd, off_t(TraceFileInput.maximumFileSize + 1)) == 0)   // sparse: no disk used
        close(fd)
        #expect(throws: TraceFileInputError.tooLarge(path: path, size: TraceFileInput.maximumFileSize + 1)) {
            try TraceFileInput.read(path)
        }
    }

    @Test("a line over 64 KiB is refused with its line number and length")
    func longLineIsRefused() throws {
        var lines = try recordedTrace().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[3] += String(repeating: "x", count: TraceFileInput.maximumLineLength)
        let length = lines[3].utf8.count
        let path = temporaryPath("long-line")
        try write(Array(lines.joined(separator: "\n").utf8), to: path)
        defer { unlink(path) }
        #expect(throws: TraceFileInputError.lineTooLong(path: path, line: 4, length: length)) { try TraceFileInput.read(path) }
    }

    @Test("CRLF line ends are read as LF: the same trace")
    func crlfIsRead() throws {
        let text = try recordedTrace()
        let path = temporaryPath("crlf")
        try write(Array(text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n").utf8), to: path)
        defer { unlink(path) }
        #expect(try TraceFileInput.read(path) == ReplayTrace(parsing: text))
    }

    @Test("a long diverging line is printed cut, with its length")
    func longDivergenceIsShortened() {
        let long = "callout label=\"" + String(repeating: "x", count: 10_000) + "\""
        let divergence = ReplayDivergence(line: 8, entryIndex: 5, expected: long, actual: "callout label=\"y\"", pass: 0)
        let text = TraceFileInput.describe(divergence)
        #expect(text.count < 300, "\(text.count) characters")
        #expect(text.hasPrefix("line 8 (pass 0): expected callout label=\"xxx"))
        #expect(text.contains("… (10016 characters), got callout label=\"y\""), "\(text)")
    }
}
