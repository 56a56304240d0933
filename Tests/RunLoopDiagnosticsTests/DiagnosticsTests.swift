import RunLoopDiagnostics
import Testing

@Suite("Diagnostics hook")
struct DiagnosticsTests {
    @Test("a recorder sees every report made while it records, and nothing after stop")
    func recorderSeesReports() {
        let recorder = DiagnosticsRecorder()
        Diagnostics.report(.warning, "test.recorder", "first", item: "recorder-item")
        Diagnostics.report(.error, "test.recorder", "second", item: "recorder-item")
        let seen = recorder.stop()
        Diagnostics.report(.warning, "test.recorder", "after stop", item: "recorder-item")
        let mine = seen.filter { $0.item == "recorder-item" }
        #expect(mine.map(\.message) == ["first", "second"])
        #expect(mine.map(\.severity) == [.warning, .error])
        #expect(recorder.diagnostics(withID: "test.recorder", item: "recorder-item").count == 2)
    }

    @Test("the description names severity, id and item")
    func descriptionFormat() {
        let diagnostic = Diagnostic(severity: .error, id: "loop.syscall-failed", message: "epoll_ctl: EBADF",
                                    item: "socket")
        #expect(diagnostic.description == "[error] loop.syscall-failed (socket): epoll_ctl: EBADF")
        #expect(Diagnostic.Severity.info < .fault)
    }
}
