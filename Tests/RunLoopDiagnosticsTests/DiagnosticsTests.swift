#if canImport(Glibc)
import Glibc
#endif
import RunLoopDiagnostics
import Testing

@Suite("Diagnostics hook")
struct DiagnosticsTests {
    @Test("a recorder sees every report made while it records, and nothing after stop")
    func recorderSeesReports() {
        let recorder = DiagnosticsRecorder(capturing: ["test.recorder"])
        Diagnostics.report(.warning, "test.recorder", "first", item: "recorder-item")
        Diagnostics.report(.error, "test.recorder", "second", item: "recorder-item")
        let seen = recorder.stop()
        let after = DiagnosticsRecorder(capturing: ["test.recorder"])
        Diagnostics.report(.warning, "test.recorder", "after stop", item: "recorder-item")
        #expect(after.diagnostics(withID: "test.recorder", item: "recorder-item").map(\.message) == ["after stop"])
        let mine = seen.filter { $0.item == "recorder-item" }
        #expect(mine.map(\.message) == ["first", "second"])
        #expect(mine.map(\.severity) == [.warning, .error])
        #expect(recorder.diagnostics(withID: "test.recorder", item: "recorder-item").count == 2)
    }

    @Test("a captured id is not printed; other ids are, once per id and item; after stop the id prints again")
    func capturedDiagnosticsAreNotPrinted() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let recorder = DiagnosticsRecorder(capturing: ["test.captured"])
            Diagnostics.report(.warning, "test.captured", "provoked on purpose", item: "a")
            Diagnostics.report(.warning, "test.printed", "not expected", item: "a")
            Diagnostics.report(.warning, "test.printed", "not expected, again", item: "a")
            let captured = recorder.stop()
            Diagnostics.report(.warning, "test.captured", "after stop", item: "a")
            if captured.filter({ $0.id == "test.captured" }).map(\.message) != ["provoked on purpose"] { exit(1) }
        }
        let lines = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self).split(separator: "\n")
        #expect(lines == ["RunLoopKit [warning] test.printed (a): not expected",
                          "RunLoopKit [warning] test.captured (a): after stop"])
    }

    @Test("the description names severity, id and item")
    func descriptionFormat() {
        let diagnostic = Diagnostic(severity: .error, id: "loop.syscall-failed", message: "epoll_ctl: EBADF",
                                    item: "socket")
        #expect(diagnostic.description == "[error] loop.syscall-failed (socket): epoll_ctl: EBADF")
        #expect(Diagnostic.Severity.info < .fault)
    }
}
