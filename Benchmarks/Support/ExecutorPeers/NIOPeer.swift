import BenchPasses
import CBenchSupport
import NIOCore
import NIOPosix

// SwiftNIO's epoll loop (a MultiThreadedEventLoopGroup with one thread) as a peer, its thread
// pinned to `roundTripCPU` like every other thread of a cross-thread benchmark.

/// The loop thread of a SwiftNIO benchmark; one group per benchmark, shut down in its tear-down.
/// `@unchecked Sendable`: `group` and `loop` are set in `start()` before any task is posted and
/// cleared in `stop()` after the group shut down.
public final class NIOPeer: @unchecked Sendable {
    public private(set) var group: MultiThreadedEventLoopGroup?
    public private(set) var loop: (any EventLoop)?

    /// The CPU the loop thread is pinned to.
    public let cpu: Int32

    public init(cpu: Int32 = roundTripCPU) { self.cpu = cpu }

    public func start() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let cpu = self.cpu
        let pinned = try loop.submit { bench_pin_current_thread(cpu) }.wait()
        precondition(pinned == 0, "could not pin SwiftNIO's loop thread to CPU \(cpu): errno \(pinned)")
        self.group = group
        self.loop = loop
    }

    public func stop() {
        try? group?.syncShutdownGracefully()
        group = nil
        loop = nil
    }
}
