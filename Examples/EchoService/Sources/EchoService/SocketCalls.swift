import CEchoShims
import RunLoopKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What one non-blocking `read` or `send` did.
enum TransferOutcome {
    /// This many bytes moved (never 0).
    case transferred(Int)
    /// EAGAIN/EWOULDBLOCK: try again when the loop reports readiness.
    case wouldBlock
    /// `read` returned 0: the peer shut down its writing side.
    case endOfFile
    /// Any other failure (ECONNRESET, EPIPE…): the connection is done.
    case failed(SystemCallError)
}

/// What one non-blocking `accept4` did.
enum AcceptOutcome {
    case accepted(Int32)
    /// No connection is waiting.
    case wouldBlock
    /// The connection died in the queue (ECONNABORTED, EPROTO…): try the next one.
    case aborted
    /// EMFILE/ENFILE/ENOBUFS/ENOMEM: the process cannot take another connection now.
    case outOfResources(SystemCallError)
    case failed(SystemCallError)
}

/// The socket calls of a service, each checked through RunLoopCore's `valueOrErrno` (EINTR
/// retried) and turned into an outcome the caller must switch over.
enum SocketCalls {
    static func isWouldBlock(_ code: Int32) -> Bool { code == EAGAIN || code == EWOULDBLOCK }

    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> TransferOutcome {
        switch checked("read", { Glibc.read(fd, buffer.baseAddress, buffer.count) }) {
        case .success(0): .endOfFile
        case .success(let count): .transferred(count)
        case .failure(let failure): isWouldBlock(failure.code) ? .wouldBlock : .failed(failure)
        }
    }

    /// `send` with MSG_NOSIGNAL: a vanished peer is an EPIPE outcome, not a SIGPIPE.
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> TransferOutcome {
        switch checked("send", { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }) {
        case .success(let count): .transferred(count)
        case .failure(let failure): isWouldBlock(failure.code) ? .wouldBlock : .failed(failure)
        }
    }

    static func accept(_ listener: Int32) -> AcceptOutcome {
        switch checked("accept4", { echo_accept_nonblocking(listener) }) {
        case .success(let fd):
            return .accepted(fd)
        case .failure(let failure):
            switch failure.code {
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH,
                 EOPNOTSUPP, ENETUNREACH: return .aborted   // accept(2): treat like EAGAIN and retry
            case EMFILE, ENFILE, ENOBUFS, ENOMEM: return .outOfResources(failure)
            default: return .failed(failure)
            }
        }
    }

    /// Sets an integer socket option.
    static func setOption(_ fd: Int32, level: Int32, _ name: Int32, _ value: Int32, call: StaticString) -> Result<Int32, SystemCallError> {
        var value = value
        return checked(call) { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }

    /// Sends small writes at once (echo is request/response; the NIO and libuv peers do the same).
    static func disableNagle(_ fd: Int32) -> Result<Int32, SystemCallError> {
        checked("setsockopt(TCP_NODELAY)") { echo_set_tcp_nodelay(fd) }
    }

    /// A non-blocking TCP socket listening on 127.0.0.1:`port` (0: the kernel picks), and the
    /// port it got; `bufferSize` fixes the kernel buffers its connections inherit. Nothing is left open when it throws.
    static func listenOnLoopback(port: UInt16, backlog: Int32, bufferSize: Int?) throws(SystemCallError) -> (fd: Int32, port: UInt16) {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = try checked("socket") { socket(AF_INET, type, 0) }.get()
        do {
            _ = try setOption(fd, level: SOL_SOCKET, SO_REUSEADDR, 1, call: "setsockopt(SO_REUSEADDR)").get()
            if let bufferSize {
                _ = try setOption(fd, level: SOL_SOCKET, SO_RCVBUF, Int32(bufferSize), call: "setsockopt(SO_RCVBUF)").get()
                _ = try setOption(fd, level: SOL_SOCKET, SO_SNDBUF, Int32(bufferSize), call: "setsockopt(SO_SNDBUF)").get()
            }
            var address = loopbackAddress(port: port)
            _ = try withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    checked("bind") { bind(fd, raw, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            }.get()
            _ = try checked("listen") { listen(fd, backlog) }.get()
            var bound = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = try withUnsafeMutablePointer(to: &bound) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    checked("getsockname") { getsockname(fd, raw, &length) }
                }
            }.get()
            return (fd, UInt16(bigEndian: bound.sin_port))
        } catch {
            closeDescriptor(fd, "a listening socket that could not be set up")
            throw error
        }
    }

    /// 127.0.0.1:`port` as a `sockaddr_in`.
    static func loopbackAddress(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }
}
