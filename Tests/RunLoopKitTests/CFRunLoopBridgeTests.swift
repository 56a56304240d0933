import CoreFoundation
import Foundation
import RunLoopKit
import RunLoopKitFoundation
import Testing

/// The bridge on the real CoreFoundation run loop of a dedicated thread.
@Suite("Bridges to a real CFRunLoop")
struct CFRunLoopBridgeTests {
    /// Runs `body` on a fresh thread (its own CFRunLoop, pools and pipeline) and waits for it,
    /// at most 30 s; a body that has not finished by then is recorded as an issue.
    private func onFreshThread(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            body()
            done.signal()
        }
        thread.start()
        if done.wait(timeout: .now() + 30) != .success {
            Issue.record("waited 30 s: the CFRunLoop thread's body did not finish (its run never returned)")
        }
    }

    @Test("pool observers on a CFRunLoop: objects live until BeforeWaiting and die after it")
    func poolObservers() {
        let counts = ResultBox()
        onFreshThread {
            let live = LiveCount()
            let runLoop = CFRunLoopGetCurrent()!
            let bridge = CFRunLoopBridge(runLoop: runLoop)
            bridge.installAutoreleasePools()
            var atBeforeWaiting = -1, afterWaiting = -1
            bridge.addObserver(activities: Loop.Activity([.beforeWaiting, .afterWaiting]).rawValue,
                               order: ObserverOrder.autoreleasePoolPop - 1) { activity in
                if activity == Loop.Activity.beforeWaiting.rawValue, atBeforeWaiting < 0 { atBeforeWaiting = live.value }
                if activity == Loop.Activity.afterWaiting.rawValue, afterWaiting < 0 { afterWaiting = live.value }
            }
            // A block enqueued before the run is performed by the first DoBlocks of the first pass.
            CFRunLoopPerformBlock(runLoop, kCFRunLoopDefaultMode as CFTypeRef) {
                for _ in 0..<100 { AutoreleasePool.autorelease(Tracked(live)) }
            }
            CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.02, false)
            bridge.uninstall()
            counts.set([atBeforeWaiting, afterWaiting, live.value])
        }
        #expect(counts.get() == [100, 0, 0])
    }

    @Test("commit observer on a CFRunLoop commits marks at BeforeWaiting")
    func commitObserver() {
        let order = ResultBox()
        onFreshThread {
            let runLoop = CFRunLoopGetCurrent()!
            let pipeline = CommitPipeline()
            pipeline.asCurrent {
                let bridge = CFRunLoopBridge(runLoop: runLoop)
                var steps: [String] = []
                bridge.addObserver(activities: Loop.Activity.beforeWaiting.rawValue, order: ObserverOrder.commit - 1) { _ in
                    steps.append("BW")
                }
                bridge.installCommitObserver(pipeline: pipeline)
                let layer = Layer(name: "table")
                layer.onLayout = { _ in steps.append("layout") }
                CFRunLoopPerformBlock(runLoop, kCFRunLoopDefaultMode as CFTypeRef) {
                    layer.setNeedsLayout()
                    steps.append("marked")
                }
                CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.02, false)
                bridge.uninstall()
                order.set(steps.map { $0 == "BW" ? 1 : $0 == "layout" ? 2 : 0 })
            }
        }
        // marked (0), then BeforeWaiting (1), then the layout inside the commit (2).
        #expect(order.get().prefix(3) == [0, 1, 2])
    }
}

/// Carries a result from the worker thread to the test.
final class ResultBox: @unchecked Sendable {
    // Written once by the worker before it signals the semaphore the test waits on.
    private var values: [Int] = []
    func set(_ values: [Int]) { self.values = values }
    func get() -> [Int] { values }
}
