@testable import EchoService
import RunLoopKit
#if canImport(Glibc)
import Glibc
#endif

/// A blocking loopback client whose every receive has a timeout (SO_RCVTIMEO).
final class LineClient {
    private let fd: Int32

    init(port: UInt16) throws {
        fd = try checked("socket") { socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }.get()
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        do {
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

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            offset += try bytes[offset...].withUnsafeBytes { raw in
                checked("send") { Glibc.send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL)) }
            }.get()
        }
    }

    private func setTimeout(_ timeout: Duration) throws {
        var value = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        _ = try checked("setsockopt(SO_RCVTIMEO)") { setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size)) }.get()
    }

    /// `byteCount` bytes, each `recv` waiting at most `timeout` (then EAGAIN is thrown); fewer
    /// when the peer closes first.
    func receive(_ byteCount: Int, timeout: Duration) throws -> String {
        try setTimeout(timeout)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.count < byteCount {
            let count = try checked("recv") { recv(fd, &buffer, byteCount - received.count, 0) }.get()
            if count == 0 { break }
            received += buffer.prefix(count)
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Whether the peer ended the connection with an end of file (a `recv` of 0; a reset is
    /// not one) within `timeout`.
    func receiveEndOfFile(timeout: Duration) throws -> Bool {
        try setTimeout(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        switch checked("recv", { recv(fd, &buffer, buffer.count, 0) }) {
        case .success(let count): return count == 0
        case .failure: return false
        }
    }
}
