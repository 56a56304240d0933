// The pool reports through RunLoopDiagnostics: stable ids, objc4's text in the messages.

import RunLoopDiagnostics
import Testing
@testable import Autorelease

@Suite("AutoreleasePoolDiagnostics")
struct PoolDiagnosticsTests {
    @Test("Missing pool under .diagnoseAndLeak reports pool.missing-pool with objc4's line")
    func missingPool() {
        final class MissingPoolWidget {}
        let recorder = DiagnosticsRecorder(capturing: ["pool.missing-pool"])
        let thread = onFreshThread { () -> UInt in
            AutoreleasePool.configuration.missingPool = .diagnoseAndLeak
            AutoreleasePool.autorelease(consuming: MissingPoolWidget())
            return currentThreadID()
        }
        recorder.stop()
        let reports = recorder.diagnostics(withID: "pool.missing-pool", item: "MissingPoolWidget")
        #expect(reports.count == 1)
        #expect(reports.first?.severity == .warning)
        #expect(reports.first?.message.hasPrefix("MISSING POOLS: (\(hex(thread))) Object 0x") == true)
        #expect(reports.first?.message.hasSuffix(" of class MissingPoolWidget autoreleased with no pool in place - just leaking - break on objc_autoreleaseNoPool() to debug") == true)
    }

    @Test("Under .diagnoseAndLeak, popping the outermost pool drops the drained cold page, so a later autorelease with no pool is reported",
          arguments: [0, 1], [false, true])
    func outermostPopDropsColdPage(objectsInPool: Int, pageMadeFirst: Bool) {
        final class OutermostWidget {}
        final class AfterPopWidget {}
        let recorder = DiagnosticsRecorder(capturing: ["pool.missing-pool"])
        let thread = onFreshThread { () -> UInt in
            if pageMadeFirst {
                // The page outlives this pool, so the next push's token is its first slot.
                let first = AutoreleasePool.push()
                AutoreleasePool.autorelease(consuming: OutermostWidget())
                AutoreleasePool.pop(first)
            }
            AutoreleasePool.configuration.missingPool = .diagnoseAndLeak
            let token = AutoreleasePool.push()
            for _ in 0..<objectsInPool { AutoreleasePool.autorelease(consuming: OutermostWidget()) }
            AutoreleasePool.pop(token)
            AutoreleasePool.autorelease(consuming: AfterPopWidget())
            return currentThreadID()
        }
        recorder.stop()
        let mine = recorder.diagnostics(withID: "pool.missing-pool")
            .filter { $0.message.hasPrefix("MISSING POOLS: (\(hex(thread)))") }
        #expect(mine.count == 1)
        #expect(mine.first?.message.hasSuffix(" of class AfterPopWidget autoreleased with no pool in place - just leaking - break on objc_autoreleaseNoPool() to debug") == true)
    }

    @Test("High-water tracking with .report reports each new mark as pool.high-water")
    func highWater() {
        let recorder = DiagnosticsRecorder(capturing: ["pool.high-water"])
        let thread = onFreshThread { () -> UInt in
            final class Object {}
            AutoreleasePool.configuration.highWater = .report
            for count in [300, 500, 600] {
                let token = AutoreleasePool.push()
                for _ in 0..<count { AutoreleasePool.autorelease(consuming: Object()) }
                AutoreleasePool.pop(token)
            }
            return currentThreadID()
        }
        recorder.stop()
        let marks = recorder.diagnostics(withID: "pool.high-water")
            .filter { $0.item?.hasPrefix("thread \(hex(thread)),") == true }
        #expect(marks.map(\.message) == [
            "POOL HIGHWATER: new high water mark of 301 pending releases for thread \(hex(thread))",
            "POOL HIGHWATER: new high water mark of 608 pending releases for thread \(hex(thread))",
        ])
        #expect(marks.allSatisfy { $0.severity == .info })
    }

    @Test("printPools reports the debug lines as one pool.debug-print, every time it is called")
    func printPools() {
        let recorder = DiagnosticsRecorder(capturing: ["pool.debug-print"])
        let (lines, thread) = onFreshThread { () -> ([String], UInt) in
            let token = AutoreleasePool.push()
            AutoreleasePool.deferCleanup(label: "close fd 3") {}
            AutoreleasePool.printPools()
            AutoreleasePool.printPools()
            let lines = AutoreleasePool.debugLines()
            AutoreleasePool.pop(token)
            return (lines, currentThreadID())
        }
        recorder.stop()
        let prints = recorder.diagnostics(withID: "pool.debug-print")
            .filter { $0.item?.hasPrefix("thread \(hex(thread)), print ") == true }
        #expect(prints.count == 2)
        #expect(Set(prints.compactMap(\.item)).count == 2)
        #expect(prints.allSatisfy { $0.message == lines.joined(separator: "\n") && $0.severity == .info })
    }
}
