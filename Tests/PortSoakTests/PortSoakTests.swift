import ChildProcesses
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The short form of the port soak (issue 13; issue 28: with the library's defaults), run as CI
/// runs the tool: the `port-soak` executable as a process of its own, so other suites running in
/// parallel do not move its resident set. The 60 s run is `swift run -c release port-soak`.
@Suite("PortSoak")
struct PortSoakTests {
    @Test("4 producers for 2 s into a port with the library's defaults: nothing lost, the queue drains, RSS flat")
    func defaultPortHoldsUnderFourProducers() throws {
        let path = try #require(ChildProcess.besideThisExecutable("port-soak"), "port-soak is not built next to the test bundle")
        let run = try ChildProcess.run(path, ["--seconds", "2", "--producers", "4"], environment: .inherited,
                                       capturingStandardError: false, timeout: .seconds(60))
        try #require(!run.timedOut, "port-soak did not finish within 60 s")
        #expect(run.exitStatus == 0, "exit status \(run.exitStatus): \(run.output)")
        let summary = try #require(run.output.split(separator: "\n").last.map(String.init))
        #expect(summary.contains("capacity 1024, 1 per pass"), "the library's defaults: \(summary)")
        #expect(summary.contains("(nothing lost)"), "\(summary)")
        // Unbounded, 2 s of producers outrunning one consumer queued hundreds of MiB (issue 13);
        // bounded at 1024 messages, the queue itself is under 100 KiB. Under AddressSanitizer
        // freed memory waits in its quarantine (256 MiB by default), so RSS says nothing there.
        if dlsym(nil, "__asan_init") == nil {   // nil: RTLD_DEFAULT, every loaded object
            let start = try #require(SoakSummary.mebibytes(after: "RSS start ", in: summary))
            let maximum = try #require(SoakSummary.mebibytes(after: "max ", in: summary))
            #expect(maximum - start < 32, "\(summary)")
        }
    }
}

/// Reading the soak's summary line.
enum SoakSummary {
    /// The number before " MiB" that follows `label` in `text`.
    static func mebibytes(after label: String, in text: String) -> Double? {
        let characters = Array(text), pattern = Array(label)
        guard pattern.count <= characters.count else { return nil }
        for start in 0...(characters.count - pattern.count) where Array(characters[start..<start + pattern.count]) == pattern {
            return Double(String(characters[(start + pattern.count)...].prefix { $0 == "." || $0.isNumber }))
        }
        return nil
    }
}
