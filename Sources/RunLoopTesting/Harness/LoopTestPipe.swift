#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RunLoopKit

/// A pipe the harness owns, watched by an fd source: ``LoopTestHarness/makeReady(_:fileID:filePath:line:column:)``
/// writes a byte so the source is ready; when the loop calls the source, the harness first
/// reads what is in the pipe (an fd source never reads its descriptor, S8, so an unread pipe
/// would stay ready in every pass), then calls the test's handler. Closed at teardown.
///
/// ```swift
/// let input = try harness.addFileSource("socket") { _ in harness.recorder.log("readable") }
/// harness.makeReady(input)
/// harness.runUntilIdle()
/// ```
public final class LoopTestPipe {
    /// The fd source watching the pipe's read end.
    public let source: LoopFileSource
    /// The end the fd source watches.
    public let readEnd: Int32
    /// The end ``LoopTestHarness/makeReady(_:fileID:filePath:line:column:)`` writes to.
    public let writeEnd: Int32
    private var isClosed = false

    init(label: String, order: Int, loop: Loop, handler: @escaping (LoopFileSource.Events) -> Void,
         readFailed: @escaping (SystemCallError) -> Void) throws(SystemCallError) {
        var ends: [Int32] = [-1, -1]
        if case .failure(let failure) = valueOrErrno("pipe", { pipe(&ends) }) { throw failure }
        // Non-blocking, so draining stops at EAGAIN; close-on-exec, as a test's pipe should be.
        for end in ends {
            for (get, set, flag) in [(F_GETFL, F_SETFL, O_NONBLOCK), (F_GETFD, F_SETFD, FD_CLOEXEC)] {
                let flags = valueOrErrno("fcntl", { fcntl(end, get) })
                    .flatMap { current in valueOrErrno("fcntl", { fcntl(end, set, current | flag) }) }
                if case .failure(let failure) = flags {
                    closeDescriptor(ends[0], "the read end of a harness pipe")
                    closeDescriptor(ends[1], "the write end of a harness pipe")
                    throw failure
                }
            }
        }
        readEnd = ends[0]
        writeEnd = ends[1]
        let readEnd = self.readEnd
        source = LoopFileSource(fd: readEnd, events: .readable, order: order, label: label, onOwnerThreadOf: loop) { events in
            if let failure = Self.drain(readEnd) { readFailed(failure) }
            handler(events)
        }
    }

    /// Writes one byte: the source is ready from now until its callout drains the pipe.
    func writeByte() -> SystemCallError? {
        var byte: UInt8 = 1
        if case .failure(let failure) = valueOrErrno("write(pipe)", { write(writeEnd, &byte, 1) }) { return failure }
        return nil
    }

    /// Reads everything the pipe holds; nil when it is empty now, or the failure.
    private static func drain(_ fd: Int32) -> SystemCallError? {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            switch valueOrErrno("read(pipe)", { read(fd, &buffer, buffer.count) }) {
            case .success(let count) where count > 0: continue
            case .success: return nil                                   // end of file
            case .failure(let failure): return failure.code == EAGAIN ? nil : failure
            }
        }
    }

    /// Invalidates the source and closes both ends (teardown).
    func close() {
        guard !isClosed else { return }
        isClosed = true
        source.invalidate()
        closeDescriptor(readEnd, "the read end of the harness pipe '\(source.label)'", item: source.label)
        closeDescriptor(writeEnd, "the write end of the harness pipe '\(source.label)'", item: source.label)
    }

    deinit { close() }
}
