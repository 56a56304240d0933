import CEchoShims
import RunLoopKit
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The write end of the self-pipe, read by the signal handler (an async-signal-safe atomic load).
private let signalPipeWriteEnd = Atomic<Int32>(-1)

/// SIGTERM and SIGINT as a loop source: the self-pipe pattern. The handler only writes one byte
/// to a non-blocking pipe (async-signal-safe); the pipe's read end is an fd source, so the
/// reaction runs on the loop's thread like any other event. One per process.
///
/// (signalfd would avoid the handler, but it needs the signals blocked in every thread before
/// any thread starts, which a library cannot promise; Glibc's module does not export it either.)
///
/// ```swift
/// let signals = try ShutdownSignals(loop: loop) { server.beginShutdown() }
/// loop.run()
/// signals.uninstall()
/// ```
public final class ShutdownSignals {
    private let readEnd: Int32
    private let writeEnd: Int32
    private let source: LoopFileSource
    private var previous: [Int32: sigaction] = [:]
    /// The signals caught.
    public static let signals: [Int32] = [SIGTERM, SIGINT]

    /// Installs the handlers, unblocks the signals in the calling thread (call it on the loop's
    /// thread) and adds the pipe's source to `mode` of `loop`; `handler` runs on the loop thread
    /// with each signal number caught.
    ///
    /// - Throws: the failed `pipe2` or `sigaction`, or a refused source
    ///   (``EchoServerError/refused(_:)``); nothing is left installed then.
    public init(loop: Loop, mode: Loop.Mode = .default, handler: @escaping (Int32) -> Void) throws(EchoServerError) {
        var ends: [Int32] = [-1, -1]
        if case .failure(let failure) = checked("pipe2", { echo_pipe_nonblocking(&ends) }) { throw .systemCall(failure) }
        readEnd = ends[0]
        writeEnd = ends[1]
        guard signalPipeWriteEnd.compareExchange(expected: -1, desired: writeEnd, ordering: .acquiringAndReleasing).exchanged else {
            closeDescriptor(ends[0], "a signal pipe")
            closeDescriptor(ends[1], "a signal pipe")
            throw .refused("ShutdownSignals is already installed in this process")
        }
        let readEnd = ends[0]
        source = LoopFileSource(fd: readEnd, events: .readable, label: "shutdown signals", onOwnerThreadOf: loop) { _ in
            var numbers = [UInt8](repeating: 0, count: 16)
            switch checked("read(signal pipe)", { read(readEnd, &numbers, numbers.count) }) {
            case .success(let count):
                for number in numbers.prefix(count) { handler(Int32(number)) }
            case .failure(let failure) where SocketCalls.isWouldBlock(failure.code):
                break
            case .failure(let failure):
                Diagnostics.report(.error, .echoSignalsFailed, "reading the signal pipe: \(failure)")
            }
        }
        let outcome = loop.add(source, mode: mode)
        guard case .added = outcome else {
            release()
            throw .refused("\(outcome)")
        }
        // A signal blocked in every thread never reaches the handler (a parent may hand a blocked
        // mask down through exec): unblock them in this thread, the loop's.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for signal in Self.signals { sigaddset(&unblocked, signal) }
        let maskStatus = pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        guard maskStatus == 0 else {
            release()
            throw .systemCall(SystemCallError(call: "pthread_sigmask", code: maskStatus))
        }
        for signal in Self.signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: number)
                // A full pipe already holds a pending byte: dropping this one loses nothing.
                _ = write(signalPipeWriteEnd.load(ordering: .relaxed), &byte, 1)
                errno = saved
            }
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            var old = sigaction()
            switch checked("sigaction", { sigaction(signal, &action, &old) }) {
            case .success: previous[signal] = old
            case .failure(let failure):
                uninstall()
                throw .systemCall(failure)
            }
        }
    }

    deinit { uninstall() }

    /// Restores the previous handlers, removes the source and closes the pipe. Idempotent.
    public func uninstall() {
        for (signal, var old) in previous {
            checked("sigaction", { sigaction(signal, &old, nil) })
                .reportingFailure(.echoSignalsFailed, "restoring the handler of signal \(signal)")
        }
        previous.removeAll()
        guard source.isValid else { return }
        release()
    }

    private func release() {
        source.invalidate()
        signalPipeWriteEnd.store(-1, ordering: .releasing)
        closeDescriptor(readEnd, "the signal pipe")
        closeDescriptor(writeEnd, "the signal pipe")
    }
}
