import RunLoopKit
import Synchronization

/// Asks an ``EchoServer`` to shut down from any thread: a source0 on the server's loop,
/// signalled and the loop woken, so the shutdown itself runs on the loop thread.
///
/// ```swift
/// let control = server.control        // Sendable
/// Task.detached { control.requestShutdown() }
/// ```
public final class EchoServerControl: Sendable {
    private let loop: Loop
    private let installed = Mutex<LoopSource?>(nil)

    init(loop: Loop) { self.loop = loop }

    /// Adds the source that calls `shutdown` when signalled; on the loop's thread.
    func install(mode: Loop.Mode, shutdown: @escaping () -> Void) {
        let source = LoopSource(label: "echo shutdown request", onOwnerThreadOf: loop, perform: shutdown)
        installed.withLock { $0 = source }
        loop.add(source, mode: mode)
    }

    func uninstall() {
        installed.withLock { $0 }?.invalidate()
    }

    /// Starts the graceful shutdown (stop accepting, send what is held, lingering closes) at the
    /// loop's next pass. A request made after the first was handled forces the shutdown
    /// (``EchoServer/beginShutdown()``); requests made before the loop handles one are one.
    public func requestShutdown() {
        guard let source = installed.withLock({ $0 }) else { return }
        source.signal()
        loop.wakeUp()
    }
}
