import PThreads
import RunLoopKit
import Synchronization

/// A loop on a short-lived thread: a port with a message, a timer, autoreleased objects at each
/// callout; it runs until both fired, then is torn down and its thread exits.
enum SoakShortLoop {
    static let completed = Atomic<Int>(0)
    static let incomplete = Atomic<Int>(0)

    static func runOnce() {
        runOnNewPThread(name: "soak-short") {
            let loop = Loop(clock: MonotonicClock.shared)
            var delivered = false
            var fired = false
            let pools = LoopAutoreleasePools(installedOn: loop)
            // Out of descriptors (reported): this round counts as incomplete.
            guard let port = try? LoopPortSource(label: "short-port", onOwnerThreadOf: loop, handler: { _ in
                delivered = true
                _ = AutoreleasePool.autorelease(SoakPayload())
            }) else {
                incomplete.add(1, ordering: .relaxed)
                return
            }
            let timer = try! LoopTimer(after: .microseconds(200), label: "short-timer", onOwnerThreadOf: loop) { _ in
                fired = true
                _ = AutoreleasePool.autorelease(SoakPayload())
            }
            loop.add(port, mode: .default)
            loop.add(timer, mode: .default)
            try? port.send([1])
            let deadline = MonotonicClock.shared.now.advanced(by: .seconds(5))
            while !(delivered && fired) && MonotonicClock.shared.now < deadline {
                loop.run(mode: .default, timeout: .milliseconds(10))
            }
            if delivered && fired {
                completed.add(1, ordering: .relaxed)
            } else {
                incomplete.add(1, ordering: .relaxed)
            }
            port.invalidate()
            pools.uninstall()
            loop.tearDown()
        }
    }
}
