// deferCleanup with no pool in place: reported, never lost. It runs at thread exit, at exit()
// on the calling thread, or at drainThread().

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RunLoopDiagnostics
import Testing
@testable import Autorelease

@Suite("AutoreleasePoolCleanupWithoutPool")
struct CleanupWithoutPoolTests {
    @Test("With no pool ever pushed, the cleanup is reported and runs when the thread exits")
    func noPoolRunsAtThreadExit() {
        let recorder = DiagnosticsRecorder(capturing: ["pool.cleanup-without-pool"])
        let log = Log()
        let label = "no-pool cleanup \(UInt.random(in: 0...UInt.max))"
        let beforeExit = onFreshThread { () -> [Int] in
            AutoreleasePool.deferCleanup(label: label) { log.append(1) }
            return log.ids
        }
        recorder.stop()
        #expect(beforeExit.isEmpty)
        #expect(log.ids == [1])
        let reports = recorder.diagnostics(withID: "pool.cleanup-without-pool", item: label)
        #expect(reports.count == 1)
        #expect(reports.first?.severity == .warning)
        #expect(reports.first?.message.contains("it will run when the thread exits") == true)
    }

    @Test("After every pool was popped, the cleanup waits for drainThread() (or the exit)")
    func afterLastPopRunsAtDrain() {
        let recorder = DiagnosticsRecorder(capturing: ["pool.cleanup-without-pool"])
        let log = Log()
        let label = "after-pop cleanup \(UInt.random(in: 0...UInt.max))"
        let (beforeDrain, afterDrain) = onFreshThread { () -> ([Int], [Int]) in
            primePool()   // push, autorelease, pop: the cold page stays, empty
            AutoreleasePool.deferCleanup(label: label) { log.append(1) }
            let before = log.ids
            AutoreleasePool.drainThread()
            return (before, log.ids)
        }
        recorder.stop()
        #expect(beforeDrain.isEmpty)
        #expect(afterDrain == [1])
        #expect(recorder.diagnostics(withID: "pool.cleanup-without-pool", item: label).count == 1)
    }

    @Test("Under missingPool = .diagnoseAndLeak a cleanup is still kept and run, not leaked")
    func diagnoseAndLeakKeepsCleanups() {
        let recorder = DiagnosticsRecorder(capturing: ["pool.cleanup-without-pool"])
        let log = Log()
        let label = "leak-mode cleanup \(UInt.random(in: 0...UInt.max))"
        onFreshThread {
            AutoreleasePool.configuration.missingPool = .diagnoseAndLeak
            AutoreleasePool.deferCleanup(label: label) { log.append(1) }
        }
        recorder.stop()
        #expect(log.ids == [1])
        #expect(recorder.diagnostics(withID: "pool.cleanup-without-pool", item: label).count == 1)
        #expect(recorder.diagnostics(withID: "pool.missing-pool", item: label).isEmpty)
    }

    @Test("A pool in place, also below a full page or above a no-pool object, is found: nothing reported")
    func poolInPlaceIsFound() {
        let recorder = DiagnosticsRecorder()
        let log = Log()
        let label = "pooled cleanup \(UInt.random(in: 0...UInt.max))"
        let orders = onFreshThread { () -> [[Int]] in
            final class Object {}
            var orders: [[Int]] = []
            // The placeholder pool.
            let first = AutoreleasePool.push()
            AutoreleasePool.deferCleanup(label: label) { log.append(1) }
            AutoreleasePool.pop(first)
            orders.append(log.ids)
            // The pool's boundary is two pages down.
            let deep = AutoreleasePool.push()
            for _ in 0..<600 { AutoreleasePool.autorelease(consuming: Object()) }
            AutoreleasePool.deferCleanup(label: label) { log.append(2) }
            AutoreleasePool.pop(deep)
            orders.append(log.ids)
            AutoreleasePool.drainThread()
            // An object autoreleased with no pool sits in slot 0; a pool pushed above it counts.
            AutoreleasePool.autorelease(consuming: Object())
            let above = AutoreleasePool.push()
            AutoreleasePool.deferCleanup(label: label) { log.append(3) }
            AutoreleasePool.pop(above)
            orders.append(log.ids)
            return orders
        }
        recorder.stop()
        #expect(orders == [[1], [1, 2], [1, 2, 3]])
        #expect(recorder.diagnostics(withID: "pool.cleanup-without-pool", item: label).isEmpty)
    }

    @Test("Above a no-pool object with no pool pushed, the cleanup is reported and runs at the exit")
    func aboveNoPoolObject() {
        let recorder = DiagnosticsRecorder(capturing: ["pool.cleanup-without-pool"])
        let log = Log()
        let label = "implicit-page cleanup \(UInt.random(in: 0...UInt.max))"
        onFreshThread {
            AutoreleasePool.autorelease(consuming: Tracked(0, log))
            AutoreleasePool.deferCleanup(label: label) { log.append(1) }
        }
        recorder.stop()
        #expect(log.ids == [1, 0])
        #expect(recorder.diagnostics(withID: "pool.cleanup-without-pool", item: label).count == 1)
    }

    @Test("The thread that calls exit() runs its pool-less cleanups before the process ends")
    func runsAtProcessExit() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            AutoreleasePool.deferCleanup(label: "at exit") {
                let text = "cleanup ran at exit\n"
                _ = text.withCString { write(1, $0, strlen($0)) }
            }
            exit(0)
        }
        let text = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        #expect(text.contains("cleanup ran at exit"))
    }
}
