@testable import EchoService
import RunLoopKit
#if canImport(Glibc)
import Glibc
#endif

/// A blocking loopback client: every send and receive has a timeout (SO_SNDTIMEO,
/// SO_RCVTIMEO), so no test waits without a deadline.
final class BlockingClient {
    /// How a read to the end stopped.
    enum End: Equatable, CustomStringConvertible {
        /// A `recv` of 0: the server's end of file.
        case endOfFile
        /// ECONNRESET: the server reset the connection.
        case reset
        /// The timeout passed with the connection still open.
        case timedOut
        case failed(Int32)

        var description: String {
            switch self {
            case .endOfFile: "end of file"
            case .reset: "reset"
            case .timedOut: "timed out"
            case .failed(let code): "failed (errno \(code))"
            }
        }
    }

    let fd: Int32

    /// Connects to 127.0.0.1:`port`; `receiveBuffer` fixes SO_RCVBUF before connecting (a small
    /// one makes a slow reader whose kernel cannot absorb the replies).
    init(port: UInt16, receiveBuffer: Int32? = nil, timeout: Duration = .seconds(20)) throws {
        fd = try checked("socket") { socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }.get()
        do {
            if var size = receiveBuffer {
                _ = try checked("setsockopt(SO_RCVBUF)") { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, 4) }.get()
            }
            var limit = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
            _ = try checked("setsockopt(SO_RCVTIMEO)") { setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size)) }.get()
            _ = try checked("setsockopt(SO_SNDTIMEO)") { setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size)) }.get()
            var address = SocketCalls.loopbackAddress(port: port)
            _ = try withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    checked("connect") { connect(fd, raw, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            }.get()
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    /// Sends every byte (each `send` waits at most the timeout); throws what failed.
    func sendAll(_ bytes: [UInt8]) throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            offset += try bytes[offset...].withUnsafeBytes { raw in
                checked("send") { Glibc.send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL)) }
            }.get()
        }
    }

    /// Sends the text's UTF-8 bytes.
    func send(_ text: String) throws(SystemCallError) { try sendAll(Array(text.utf8)) }

    /// Exactly `count` bytes as text (fewer when the connection ends first).
    func receive(_ count: Int) -> String { String(decoding: readToEndOf(count: count), as: UTF8.self) }

    /// Exactly `count` bytes (fewer when the connection ends first).
    func readToEndOf(count: Int) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while received.count < count {
            guard case .success(let got) = checked("recv", { recv(fd, &buffer, min(buffer.count, count - received.count), 0) }), got > 0 else { break }
            received += buffer.prefix(got)
        }
        return received
    }

    /// Sends `bytes` once (what the kernel takes); the count, or the error number.
    func sendOnce(_ bytes: [UInt8]) -> Result<Int, SystemCallError> {
        bytes.withUnsafeBytes { raw in checked("send") { Glibc.send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL)) } }
    }

    func shutDownWriting() throws(SystemCallError) {
        _ = try checked("shutdown(SHUT_WR)") { shutdown(fd, Int32(SHUT_WR)) }.get()
    }

    /// Reads until the server's end of file, a reset, or the timeout; what arrived and how it ended.
    func readToEnd() -> (bytes: [UInt8], end: End) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            switch checked("recv", { recv(fd, &buffer, buffer.count, 0) }) {
            case .success(0): return (received, .endOfFile)
            case .success(let count): received += buffer.prefix(count)
            case .failure(let failure) where failure.code == ECONNRESET: return (received, .reset)
            case .failure(let failure) where failure.code == EAGAIN: return (received, .timedOut)
            case .failure(let failure): return (received, .failed(failure.code))
            }
        }
    }
}

/// `count` bytes of a pattern varied enough that a lost, doubled or moved byte shows. (Made
/// before a client connects: in a debug build 400 KiB take a noticeable time, which an idle
/// timer would see.)
func patternBytes(_ count: Int, seed: Int = 0) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        for index in 0..<count { buffer[index] = UInt8(truncatingIfNeeded: index &* 131 &+ seed &* 17 &+ (index >> 9)) }
        initialized = count
    }
}

/// Waits until `condition` holds or `timeout` passes, yielding the CPU between looks (no sleep:
/// the server thread runs meanwhile); whether it held.
func waitUntil(timeout: Duration, _ condition: () -> Bool) -> Bool {
    let deadline = MonotonicClock.shared.now.advanced(by: timeout)
    while !condition() {
        guard MonotonicClock.shared.now < deadline else { return condition() }
        sched_yield()
    }
    return true
}
