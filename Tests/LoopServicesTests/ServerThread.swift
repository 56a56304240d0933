import LoopServices
import CRunLoopShims
import PThreads
import RunLoopKit
#if canImport(Glibc)
import Glibc
#endif

/// One value handed from one thread to another, waited for with a deadline.
final class Handoff<Value: Sendable>: Sendable {
    private let lock = PThreadMutex()
    private let changed = PThreadCondition()
    private let value = Locked<Value?>(nil)

    func put(_ newValue: Value) {
        lock.withLock {
            value.withLock { $0 = newValue }
            changed.broadcast()
        }
    }

    /// The value, or nil when `timeout` passed first.
    func take(timeout: Duration) -> Value? {
        let deadline = MonotonicClock.shared.now.advanced(by: timeout).nanoseconds
        return lock.withLock {
            while true {
                if let current = value.withLock({ $0 }) { return current }
                guard changed.wait(lock, untilMonotonicNanoseconds: deadline) else { return value.withLock { $0 } }
            }
        }
    }
}

/// An `EchoServer` on a pthread of its own with `LoopAutoreleasePools`, as a service runs it.
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
    private let thread: pthread_t

    /// Starts the server; nil (with the error) when it did not start within 10 s.
    init(_ configuration: EchoConfiguration) throws {
        let started = Handoff<Result<Started, EchoServerError>>()
        let finished = self.finished
        let handle = startPThread(name: Self.threadName) {
            _ = rlk_set_current_thread_name(ServerThread.threadName)
            let loop = Loop.current
            let pools = LoopAutoreleasePools(installedOn: loop, modes: [configuration.mode])
            do throws(EchoServerError) {
                let server = try EchoServer(configuration: configuration, loop: loop)
                server.onFinished = { loop.stop() }
                started.put(.success(Started(port: server.port, counters: server.counters, control: server.control,
                                             kernelThreadID: rlk_gettid())))
                while !server.isFinished { loop.run(mode: configuration.mode, timeout: .seconds(3600)) }
            } catch {
                started.put(.failure(error))
            }
            pools.uninstall()
            finished.put(true)
        }
        guard let result = started.take(timeout: .seconds(10)) else { throw ServerThreadError.didNotStart }
        if case .failure = result { pthread_join(handle, nil) }   // the body ends at once then
        let server = try result.get()
        thread = handle
        port = server.port
        counters = server.counters
        control = server.control
        kernelThreadID = server.kernelThreadID
    }

    /// Asks for the graceful shutdown and waits for the thread to end; false when the server
    /// had not finished within `timeout`.
    func shutdown(timeout: Duration) -> Bool {
        control.requestShutdown()
        guard finished.take(timeout: timeout) != nil else { return false }
        pthread_join(thread, nil)   // the body has returned: this only collects the thread
        return true
    }
}

enum ServerThreadError: Error, CustomStringConvertible {
    case didNotStart
    var description: String { "the echo server thread did not report within 10 s" }
}
