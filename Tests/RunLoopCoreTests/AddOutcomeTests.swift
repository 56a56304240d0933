import Testing
import RunLoopDiagnostics
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// What `Loop.add` answers (`Loop.AddOutcome`), what `remove` answers, and the port queue's
/// capacity.
@Suite("AddOutcome")
struct AddOutcomeTests {
    @Test("add answers added, then alreadyPresent; remove answers whether a mode held the item")
    func addedThenPresent() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        let timer = try LoopTimer(after: .seconds(1), clock: clock) { _ in }
        #expect(loop.add(timer, mode: .default) == .added)
        #expect(loop.add(timer, mode: .default) == .alreadyPresent)
        #expect(loop.add(timer, mode: "Other") == .added)
        #expect(loop.remove(timer, mode: .default))
        #expect(!loop.remove(timer, mode: .default))
        #expect(Loop.AddOutcome.added.description == "added")
        #expect(Loop.AddOutcome.refused(.invalidated).description == "refused: the item was invalidated")
    }

    @Test(".common adds: added once as a common item, then alreadyPresent; re-adding restores a mode it left (M3)")
    func commonAdds() {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        loop.addCommonMode(.tracking)
        let source = LoopSource(label: "common-source") {}
        #expect(loop.add(source, mode: .common) == .added)
        #expect(loop.contains(source, mode: .default) && loop.contains(source, mode: .tracking))
        #expect(loop.add(source, mode: .common) == .alreadyPresent)
        // Removed from one common mode directly: re-adding to .common puts it back.
        #expect(loop.remove(source, mode: .tracking))
        #expect(loop.add(source, mode: .common) == .added)
        #expect(loop.contains(source, mode: .tracking))
        // An item already in a common mode directly becomes a common item.
        let observer = LoopObserver(activities: .entry) { _, _ in }
        #expect(loop.add(observer, mode: .default) == .added)
        #expect(loop.add(observer, mode: .common) == .added)
        #expect(loop.contains(observer, mode: .tracking) && loop.contains(observer, mode: .common))
        #expect(loop.remove(observer, mode: .common))
        #expect(!loop.remove(observer, mode: .common))
    }

    @Test("a second fd source on the same fd in one mode is refused with EEXIST and a diagnostic")
    func sameDescriptorTwice() {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let recorder = DiagnosticsRecorder(capturing: [.addRefused])
        let first = LoopFileSource(fd: fds[0], events: .readable, label: "same-fd-first") { _ in }
        let second = LoopFileSource(fd: fds[0], events: .readable, label: "same-fd-second") { _ in }
        #expect(loop.add(first, mode: .default) == .added)
        #expect(loop.add(second, mode: .default)
                == .refused(.systemCall(SystemCallError(call: "epoll_ctl(ADD)", code: EEXIST))))
        #expect(loop.contains(first, mode: .default) && !loop.contains(second, mode: .default))
        let reported = recorder.diagnostics(withID: .addRefused, item: "same-fd-second")
        #expect(reported.count == 1)
        #expect(reported.first?.message.contains("File exists") == true, "\(reported)")
        // Another mode has its own wait set: the second source fits there.
        #expect(loop.add(second, mode: "Other") == .added)
    }

    @Test("a .common add refused in one common mode reports the refusal")
    func commonPartlyRefused() {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        loop.addCommonMode(.tracking)
        let recorder = DiagnosticsRecorder(capturing: [.addRefused])
        let direct = LoopFileSource(fd: fds[0], events: .readable, label: "partly-direct") { _ in }
        let common = LoopFileSource(fd: fds[0], events: .readable, label: "partly-common") { _ in }
        #expect(loop.add(direct, mode: .tracking) == .added)
        #expect(loop.add(common, mode: .common)
                == .refused(.systemCall(SystemCallError(call: "epoll_ctl(ADD)", code: EEXIST))))
        #expect(loop.contains(common, mode: .default) && !loop.contains(common, mode: .tracking))
        #expect(recorder.diagnostics(withID: .addRefused, item: "partly-common").count == 1)
    }

    @Test("an item of another loop and an invalid item are refused in .common adds too")
    func commonRefusals() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        let (other, _) = virtualLoop()
        defer { other.tearDown() }
        let recorder = DiagnosticsRecorder(capturing: [.addRefused])
        let timer = try LoopTimer(after: .seconds(1), clock: clock, label: "common-refused-timer") { _ in }
        #expect(loop.add(timer, mode: .common) == .added)
        #expect(other.add(timer, mode: .common) == .refused(.belongsToAnotherLoop))
        timer.invalidate()
        #expect(loop.add(timer, mode: .common) == .refused(.invalidated))
        #expect(recorder.diagnostics(withID: .addRefused, item: "common-refused-timer").count == 2)
    }

    @Test("a port with a small capacity refuses sends beyond it (full) and accepts again once drained")
    func portCapacity() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let received = Trace()
        let port = try LoopPortSource(label: "small", capacity: 2) { message in
            if case .bytes(let bytes) = message { received.add("\(bytes)") }
        }
        #expect(port.capacity == 2)
        loop.add(port, mode: .default)
        try port.send([1])
        try port.send(value: 2)
        #expect(throws: LoopPortSource.SendError.full(capacity: 2)) { try port.send([3]) }
        #expect(port.pendingCount == 2)
        #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .handledSource)
        #expect(port.pendingCount == 1)
        try port.send([4])
        #expect(throws: LoopPortSource.SendError.full(capacity: 2)) { try port.send([5]) }
        loop.run(mode: .default, timeout: 0)
        loop.run(mode: .default, timeout: 0)
        #expect(received.all == ["[1]", "[4]"])
        #expect(port.pendingCount == 0)
        #expect(try LoopPortSource(capacity: 0) { _ in }.capacity == 1)
        #expect(LoopPortSource.SendError.full(capacity: 2).description.contains("2 undelivered"))
    }
}
