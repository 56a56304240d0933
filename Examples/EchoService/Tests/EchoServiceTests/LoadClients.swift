@testable import EchoService
import RunLoopKit
#if canImport(Glibc)
import Glibc
#endif

/// What one load-test client does.
enum ClientPlan: Sendable {
    /// Sends `bytes` in `chunk`-sized writes while reading the echo back; checks every byte.
    case echo(bytes: Int, chunk: Int)
    /// Sends without reading until its writes stall while the server has stopped reading (or
    /// everything is sent), then reads it all back and checks it.
    case slowReader(bytes: Int)
    /// Sends `after` bytes of a request, then vanishes without reading: a reset (SO_LINGER 0)
    /// or a plain close.
    case vanish(after: Int, reset: Bool)
    /// Sends nothing and expects the server to close the connection (idle timeout).
    case idle
}

/// What one client saw.
struct ClientOutcome: Sendable {
    var sent = 0
    var verified = 0
    /// A slow reader's writes stalled while the server reported a paused connection.
    var stalledWhileServerPaused = false
    var sawEndOfFile = false
    var failure: String?
}

/// The byte at `offset` of client `client`'s stream: varied enough that a lost, duplicated or
/// misrouted byte shows.
func patternByte(client: Int, offset: Int) -> UInt8 {
    UInt8(truncatingIfNeeded: offset &* 131 &+ client &* 17 &+ (offset >> 9))
}

/// Non-blocking clients driven by one thread with poll(2); every wait has the run's deadline.
final class LoadClients {
    private final class Client {
        let id: Int
        let plan: ClientPlan
        let fd: Int32
        var connected = false
        var done = false
        var reading: Bool
        /// A write found the socket full (EAGAIN), or a poll round passed without writability,
        /// and nothing has been written since.
        var stalled = false
        var outcome = ClientOutcome()

        init(id: Int, plan: ClientPlan, fd: Int32) {
            self.id = id
            self.plan = plan
            self.fd = fd
            switch plan {
            case .echo, .idle: reading = true
            case .slowReader, .vanish: reading = false
            }
        }

        var total: Int {
            switch plan {
            case .echo(let bytes, _), .slowReader(let bytes): bytes
            case .vanish(let after, _): after
            case .idle: 0
            }
        }

        var wantsToWrite: Bool {
            guard connected, outcome.sent < total else { return false }
            if case .echo = plan { return outcome.sent - outcome.verified < 256 * 1024 }   // a bounded window in flight
            return true
        }
    }

    private var clients: [Client] = []
    private let counters: EchoCounters
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// Opens one socket per plan and starts connecting to 127.0.0.1:`port`.
    init(port: UInt16, plans: [ClientPlan], counters: EchoCounters) throws {
        self.counters = counters
        for (id, plan) in plans.enumerated() {
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            let fd = try checked("socket") { socket(AF_INET, type, 0) }.get()
            clients.append(Client(id: id, plan: plan, fd: fd))
            if case .slowReader = plan {
                // Small fixed buffers (no autotuning), so the kernel cannot absorb the whole stream.
                var size: Int32 = 32 * 1024
                _ = try checked("setsockopt(SO_SNDBUF)") { setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, 4) }.get()
                _ = try checked("setsockopt(SO_RCVBUF)") { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, 4) }.get()
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            let status = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    checked("connect") { connect(fd, raw, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            }
            if case .failure(let failure) = status, failure.code != EINPROGRESS { throw failure }
        }
    }

    deinit { for client in clients where !client.done { close(client.fd) } }

    /// Drives every client to its end; the outcomes, or a failure naming what did not finish by
    /// the deadline.
    func run(timeout: Duration) -> Result<[ClientOutcome], LoadFailure> {
        let deadline = MonotonicClock.shared.now.advanced(by: timeout)
        while true {
            let active = clients.filter { !$0.done }
            startReadingIfServerPaused(active)
            if active.isEmpty { return .success(clients.map(\.outcome)) }
            guard MonotonicClock.shared.now < deadline else {
                let names = active.prefix(5).map {
                    "client \($0.id) (\($0.plan)): sent \($0.outcome.sent), verified \($0.outcome.verified), stalled \($0.stalled), reading \($0.reading)"
                }
                return .failure(LoadFailure("\(active.count) clients had not finished after \(timeout): "
                    + names.joined(separator: "; ") + "; server: \(counters.snapshot)"))
            }
            var polls = active.map { client -> pollfd in
                var events: Int16 = 0
                if !client.connected || client.wantsToWrite { events |= Int16(POLLOUT) }
                if client.connected && client.reading { events |= Int16(POLLIN) }
                return pollfd(fd: client.fd, events: events, revents: 0)
            }
            switch checked("poll", { poll(&polls, nfds_t(polls.count), 50) }) {
            case .failure(let failure): return .failure(LoadFailure("poll: \(failure)"))
            case .success: break
            }
            for (client, polled) in zip(active, polls) {
                // Asked for writability and did not get it within the round: stalled.
                if polled.events & Int16(POLLOUT) != 0 && polled.revents & Int16(POLLOUT) == 0 && client.connected {
                    client.stalled = true
                }
                if polled.revents != 0 { step(client, Int32(polled.revents)) }
            }
        }
    }

    private func finish(_ client: Client, failure: String? = nil) {
        if let failure, client.outcome.failure == nil { client.outcome.failure = "client \(client.id) (\(client.plan)): \(failure)" }
        client.done = true
        close(client.fd)
    }

    private func step(_ client: Client, _ events: Int32) {
        if !client.connected {
            var code: Int32 = 0
            var length = socklen_t(4)
            _ = getsockopt(client.fd, SOL_SOCKET, SO_ERROR, &code, &length)
            guard code == 0 else { return finish(client, failure: "connect failed: errno \(code)") }
            client.connected = true
            if case .vanish(0, _) = client.plan { return vanish(client) }
        }
        if client.reading && events & (Int32(POLLIN) | Int32(POLLHUP) | Int32(POLLERR)) != 0 { read(client) }
        if !client.done && client.wantsToWrite { write(client) }
    }

    private func write(_ client: Client) {
        let count = min(client.total - client.outcome.sent, chunkSize(client))
        for i in 0..<count { buffer[i] = patternByte(client: client.id, offset: client.outcome.sent + i) }
        switch checked("send", { send(client.fd, buffer, count, Int32(MSG_NOSIGNAL)) }) {
        case .success(let sent):
            client.stalled = false
            client.outcome.sent += sent
            if client.outcome.sent == client.total {
                if case .vanish = client.plan { return vanish(client) }
                client.reading = true   // a slow reader that sent everything reads now
            }
        case .failure(let failure) where failure.code == EAGAIN:
            client.stalled = true
        case .failure(let failure):
            finish(client, failure: "send: \(failure)")
        }
    }

    /// A slow reader whose writes stall starts reading once the server reports a connection
    /// that stopped reading (checked every poll round, at most 50 ms apart): the proof that the
    /// server's reading stopped rather than only the kernel's buffers filling.
    private func startReadingIfServerPaused(_ active: [Client]) {
        let stalledSlowReaders = active.filter { client in
            if case .slowReader = client.plan { return client.stalled && !client.reading }
            return false
        }
        guard !stalledSlowReaders.isEmpty, counters.snapshot.pausedNow > 0 else { return }
        for client in stalledSlowReaders {
            client.outcome.stalledWhileServerPaused = true
            client.reading = true
        }
    }

    private func chunkSize(_ client: Client) -> Int {
        if case .echo(_, let chunk) = client.plan { return min(chunk, buffer.count) }
        return buffer.count
    }

    private func read(_ client: Client) {
        switch checked("recv", { recv(client.fd, &buffer, buffer.count, 0) }) {
        case .success(0):
            client.outcome.sawEndOfFile = true
            if case .idle = client.plan { return finish(client) }
            finish(client, failure: "the server closed after \(client.outcome.verified) of \(client.total) bytes")
        case .success(let count):
            if case .idle = client.plan { return finish(client, failure: "an idle client received \(count) bytes") }
            for i in 0..<count {
                let offset = client.outcome.verified + i
                guard offset < client.total, buffer[i] == patternByte(client: client.id, offset: offset) else {
                    return finish(client, failure: "byte \(offset) differs from what was sent")
                }
            }
            client.outcome.verified += count
            if client.outcome.verified == client.total { finish(client) }
        case .failure(let failure) where failure.code == EAGAIN:
            break
        case .failure(let failure):
            finish(client, failure: "recv: \(failure)")
        }
    }

    private func vanish(_ client: Client) {
        if case .vanish(_, true) = client.plan {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)   // close sends a reset
            _ = setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        finish(client)
    }
}

struct LoadFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
