import Testing
import PThreads
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

/// Items whose callouts keep state of the loop's own thread (`onOwnerThreadOf:`,
/// `Loop.ownerThreadCallout`): they run there, and anywhere else stop the process.
@Suite("OwnerThreadItems")
struct OwnerThreadItems {
    /// State of the test's thread, read after the run: not `Sendable`.
    final class Counts {
        var observer = 0, timer = 0, secondsTimer = 0, file = 0, port = 0, source = 0
    }

    @Test("onOwnerThreadOf: observer, timer, fd source, port and source0 run on the loop's thread with its state")
    func callOutsKeepTheThreadsState() throws {
        let (loop, _) = virtualLoop()
        defer { loop.tearDown() }
        let counts = Counts()
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }

        let observer = LoopObserver(activities: .exit, onOwnerThreadOf: loop) { _, _ in counts.observer += 1 }
        let timer = try LoopTimer(after: .milliseconds(1), label: "owned", onOwnerThreadOf: loop) { _ in counts.timer += 1 }
        let secondsTimer = try LoopTimer(after: 0.002, clock: loop.clock,
                                         loop.ownerThreadCallout("seconds") { _ in counts.secondsTimer += 1 })
        // The write end of an empty pipe is writable at every pass: invalidated after its first call.
        var file: LoopFileSource?
        file = LoopFileSource(fd: ends[1], events: .writable, onOwnerThreadOf: loop) { _ in
            counts.file += 1
            file?.invalidate()
        }
        let port = try LoopPortSource(label: "owned-port", onOwnerThreadOf: loop) { _ in counts.port += 1 }
        defer { port.invalidate() }
        let source = LoopSource(label: "owned-source", onOwnerThreadOf: loop) { counts.source += 1 }
        loop.add(observer, mode: .default)
        loop.add(timer, mode: .default)
        loop.add(secondsTimer, mode: .default)
        loop.add(file!, mode: .default)
        loop.add(port, mode: .default)
        loop.add(source, mode: .default)
        try port.send([1])
        source.signal()

        loop.run(mode: .default, timeout: .milliseconds(10))

        #expect(counts.timer == 1 && counts.secondsTimer == 1)
        #expect(counts.file == 1 && counts.port == 1 && counts.source == 1)
        #expect(counts.observer == 1, "one run, one Exit")
        source.invalidate()
        observer.invalidate()
    }

    @Test("an owner-thread callout performed by a loop on another thread stops the process, naming the item")
    func calledOnAnotherThreadStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = Loop(clock: MonotonicClock.shared)
            defer { loop.tearDown() }
            var performed = 0
            // A source0 may be in several loops: the other loop's thread performs it.
            let source = LoopSource(label: "misplaced-source", onOwnerThreadOf: loop) { performed += 1 }
            runOnNewPThread(name: "other-loop") {
                let other = Loop.current
                other.add(source, mode: .default)
                source.signal()
                other.run(mode: .default, timeout: 0)
            }
            print("performed \(performed) time(s) on its own thread")
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("LoopSource 'misplaced-source' was made for the loop of thread"))
        #expect(text.contains("but was called on thread") && text.contains("add it to that loop only"))
    }

    @Test("making an owner-thread callout off the loop's thread stops the process")
    func madeOnAnotherThreadStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = Loop(clock: MonotonicClock.shared)
            defer { loop.tearDown() }
            runOnNewPThread(name: "not-the-owner") {
                _ = LoopObserver(activities: .entry, label: "made-elsewhere", onOwnerThreadOf: loop) { _, _ in }
            }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("LoopObserver 'made-elsewhere' (an owner-thread callout) called on thread"))
        #expect(text.contains("but this loop belongs to thread"))
    }
}
