import CEchoShims
@testable import EchoService
import Foundation
import RunLoopKit
#if canImport(Glibc)
import Glibc
#endif

/// One value handed from one thread to another, waited for with a deadline.
final class Handoff<Value: Sendable>: @unchecked Sendable {   // Sendable: `value` is only touched under `condition`
    private let condition = NSCondition()
    private var value: Value?

    func put(_ newValue: Value) {
        condition.lock()
        value = newValue
        condition.broadcast()
        condition.unlock()
    }

    /// The value, or nil when `timeout` passed first.
    func take(timeout: Duration) -> Value? {
        let deadline = Date(timeIntervalSinceNow: Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while value == nil {
            guard condition.wait(until: deadline) else { break }
        }
        return value
    }
}

/// An `EchoServer` on a thread of its own with `LoopAutoreleasePools`, as a service runs it.
final class ServerThread: Sendable {
    struct Started: Sendable {
        let port: UInt16
        let counters: EchoCounters
        let control: EchoServerControl
        let kernelThreadID: Int64
    }

    static let threadName = "echo server"
    let port: UInt16
    let counters: EchoCounters
    let control: EchoServerControl
    /// The server thread's kernel id: `/proc/self/task/<id>` exists while it runs.
    let kernelThreadID: Int64
    private let finished = Handoff<Bool>()
    private let thread: JoinableThread

    /// Starts the server; throws when it did not start within 10 s or refused its configuration.
    init(_ configuration: EchoConfiguration) throws {
        let started = Handoff<Result<Started, EchoServerError>>()
        let finished = self.finished
        let thread = JoinableThread {
            _ = echo_set_thread_name(ServerThread.threadName)
            let loop = Loop.current
            let pools = LoopAutoreleasePools(installedOn: loop, modes: [configuration.mode])
            do throws(EchoServerError) {
                let server = try EchoServer(configuration: configuration, loop: loop)
                server.onFinished = { loop.stop() }
                started.put(.success(Started(port: server.port, counters: server.counters, control: server.control,
                                             kernelThreadID: Int64(echo_gettid()))))
                while !server.isFinished { loop.run(mode: configuration.mode, timeout: .seconds(3600)) }
            } catch {
                started.put(.failure(error))
            }
            pools.uninstall()
            finished.put(true)
        }
        guard let result = started.take(timeout: .seconds(10)) else { throw ServerThreadError.didNotStart }
        if case .failure = result { thread.join() }   // the body ends at once then
        let server = try result.get()
        self.thread = thread
        port = server.port
        counters = server.counters
        control = server.control
        kernelThreadID = server.kernelThreadID
    }

    /// Asks for the graceful shutdown and waits for the server's loop to end; false when the
    /// server had not finished within `timeout`.
    func shutdown(timeout: Duration) -> Bool {
        control.requestShutdown()
        return waitUntilFinished(timeout: timeout)
    }

    /// Waits for the server's loop to end (after a shutdown asked for elsewhere); false when it
    /// had not within `timeout`.
    func waitUntilFinished(timeout: Duration) -> Bool {
        guard finished.take(timeout: timeout) != nil else { return false }
        thread.join()   // the body has returned: this only collects the thread
        return true
    }
}

enum ServerThreadError: Error, CustomStringConvertible {
    case didNotStart
    var description: String { "the echo server thread did not report within 10 s" }
}

/// A pthread running a closure, joined by `join` (Foundation's `Thread` cannot be joined, and
/// the load test checks that the server's thread is gone).
final class JoinableThread: Sendable {
    private let handle: pthread_t

    init(_ body: @escaping @Sendable () -> Void) {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        var handle = pthread_t()
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let status = pthread_create(&handle, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        precondition(status == 0, "pthread_create failed: \(status)")
        self.handle = handle
    }

    /// Waits for the thread to end. Once.
    func join() { pthread_join(handle, nil) }
}
