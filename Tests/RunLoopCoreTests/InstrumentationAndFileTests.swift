import Testing
import CRunLoopShims
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

@Suite("EventSink")
struct EventSinkTests {
    final class Recorder: LoopEventSink, @unchecked Sendable {  // loop thread only
        var lines: [String] = []
        func loop(_ loop: Loop, emitted event: LoopEvent) {
            switch event.kind {
            case .activity(let a): lines.append("\(a.shortName)#\(event.pass)")
            case .calloutBegin(let k): lines.append("begin \(k) \(event.label)@\(event.time.ms)")
            case .calloutEnd(let k): lines.append("end \(k) \(event.label)")
            case .sleep: lines.append("sleep")
            case .wake: lines.append("wake@\(event.time.ms)")
            case .runBegin: lines.append("runBegin \(event.mode)")
            case .runEnd(let r): lines.append("runEnd \(r)")
            case .input: break   // inputs are checked by RunLoopTesting's replay tests
            }
        }
    }

    @Test("the sink sees runs, activities (with pass numbers), callouts, sleeps and wakes in order")
    func sequence() throws {
        let (loop, clock) = virtualLoop()
        defer { loop.tearDown() }
        let recorder = Recorder()
        loop.eventSink = recorder
        loop.add(LoopObserver(activities: [.entry, .beforeWaiting, .afterWaiting, .exit], label: "obs") { _, _ in },
                 mode: .default)
        loop.add(try LoopTimer(after: 0.01, clock: clock, label: "t") { _ in }, mode: .default)
        let start = loop.passCount
        #expect(loop.run(mode: .default, timeout: 1) == .finished)
        let p = start + 1
        #expect(recorder.lines == [
            "runBegin kCFRunLoopDefaultMode",
            "E#\(start)", "begin observer obs@0", "end observer obs",
            "BW#\(p)", "begin observer obs@0", "end observer obs",
            "sleep", "wake@10",
            "AW#\(p)", "begin observer obs@10", "end observer obs",
            "begin timer t@10", "end timer t",
            "X#\(p)", "begin observer obs@10", "end observer obs",
            "runEnd finished",
        ])
        // R3: a run that returns at once emits nothing.
        recorder.lines.removeAll()
        #expect(loop.run(mode: "Missing", timeout: 1) == .finished)
        #expect(recorder.lines.isEmpty)
    }
}

@Suite("FileSources")
struct FileSourceTests {
    @Test("writable readiness, and hang-up (with readable EOF) when the peer shuts down")
    func writableAndHangUp() {
        // A socket pair, not a pipe: shutdown() reaches the peer even if a child process being
        // spawned by a concurrent test briefly inherits a copy of the descriptor.
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        let (mine, peer) = (fds[0], fds[1])
        defer { close(mine); close(peer) }
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let trace = Trace()
        let writer = LoopFileSource(fd: mine, events: .writable, label: "w") { events in
            trace.add("w:\(events.rawValue)")
        }
        loop.add(writer, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["w:2"])
        loop.remove(writer, mode: .default)

        trace.reset()
        let reader = LoopFileSource(fd: mine, events: .readable, label: "r") { events in
            trace.add("r:\(events.contains(.readable)) hup:\(events.contains(.hangUp))")
        }
        loop.add(reader, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .timedOut)
        #expect(shutdown(peer, Int32(SHUT_RDWR)) == 0)
        #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) == .handledSource)
        #expect(trace.all == ["r:true hup:true"])
        // Level-triggered: still ready; removing the source stops it.
        loop.remove(reader, mode: .default)
        #expect(loop.run(mode: .default, timeout: 0) == .finished)
    }

    @Test("the loop never reads the fd: unread data stays for the handler")
    func neverReads() {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var bytes: [UInt8] = [1, 2, 3]
        #expect(write(fds[1], &bytes, 3) == 3)
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        var calls = 0
        loop.add(LoopFileSource(fd: fds[0], events: .readable, onOwnerThreadOf: loop) { _ in calls += 1 }, mode: .default)
        loop.run(mode: .default, timeout: 0)
        loop.run(mode: .default, timeout: 0)
        #expect(calls == 2)
        var available: Int32 = 0
        #expect(ioctl(fds[0], UInt(FIONREAD), &available) == 0)
        #expect(available == 3)
    }
}
