import Testing
import PThreads
import RunLoopDiagnostics
@testable import RunLoopCore

/// An actor whose executor is a loop: its methods run on the loop's thread, as callouts.
private actor LoopCounter {
    let loop: Loop
    private(set) var count = 0
    private(set) var ranOnLoopThread = true

    init(loop: Loop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func increment() {
        ranOnLoopThread = ranOnLoopThread && loop.isOwnerThread
        count += 1
    }
}

@Suite("Executor")
struct ExecutorTests {
    @Test("a LoopThread runs with nothing registered, runs blocks, and stops and joins")
    func loopThreadRunsAndStops() {
        let worker = LoopThread(name: "exec-test")
        let ran = Flag()
        worker.loop.performAndWake(inMode: .default) { ran.set() }
        ran.wait()
        #expect(ran.isSet)
        #expect(worker.isRunning)
        worker.stop()
        #expect(!worker.isRunning)
        let recorder = DiagnosticsRecorder(capturing: [.workAfterTeardown])
        #expect(!worker.loop.submit(label: "after-stop-work") { }, "the stopped thread's loop is torn down and refuses work")
        #expect(recorder.diagnostics(withID: .workAfterTeardown, item: "after-stop-work").count == 1)
    }

    @Test("an actor pinned to a LoopThread's loop runs every call on that thread; 8 threads × 1,000 calls lose none")
    func actorOnLoopThread() async {
        let worker = LoopThread(name: "actor-loop")
        let counter = LoopCounter(loop: worker.loop)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<1_000 { await counter.increment() } }
            }
        }
        #expect(await counter.count == 8_000)
        #expect(await counter.ranOnLoopThread)
        worker.stop()
    }

    @Test("jobs are callouts of kind .job, ordered with blocks at the block step of a pass")
    func jobsAreTracedCallouts() async {
        final class Kinds: LoopEventSink, @unchecked Sendable {  // written on the loop thread only, read after join
            var kinds: [String] = []
            func loop(_ loop: Loop, emitted event: LoopEvent) {
                if case .calloutBegin(let kind) = event.kind { kinds.append("\(kind):\(event.label)") }
            }
        }
        let worker = LoopThread(name: "traced-jobs")
        let kinds = Kinds()
        worker.loop.eventSink = kinds
        let counter = LoopCounter(loop: worker.loop)
        await counter.increment()
        worker.stop()
        #expect(kinds.kinds.contains("job:job"), "\(kinds.kinds)")
    }

    @Test("isIsolatingCurrentContext holds only on the loop's thread while it runs")
    func isolation() {
        let worker = LoopThread(name: "isolation")
        #expect(worker.loop.isIsolatingCurrentContext() == false)
        let inside = Locked<Bool?>(nil)
        let done = Flag()
        worker.loop.performAndWake(inMode: .default) {
            inside.withLock { $0 = worker.loop.isIsolatingCurrentContext() }
            done.set()
        }
        done.wait()
        #expect(inside.withLock { $0 } == true)
        worker.stop()
    }
}
