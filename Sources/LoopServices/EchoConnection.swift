import Autorelease
import RunLoopCore
import RunLoopDiagnostics

/// One accepted connection: its descriptor, fd source, idle timer, read buffer (a partial
/// line) and write buffer (unsent bytes). Lives on the server's loop thread.
///
/// The source's and timer's closures hold the connection strongly; `close` breaks that cycle
/// and hands the connection to the autorelease pool through a deferred cleanup, which closes
/// the descriptor when the pool pops at BeforeWaiting. Until then the fd number cannot be
/// reused, so no event later in the same pass can reach a new connection by mistake.
final class EchoConnection {
    enum CloseCause { case peer, idle, error, shutdown, protocolError }

    let fd: Int32
    private let configuration: EchoConfiguration
    private let counters: EchoCounters
    private weak var server: EchoServer?
    private var source: LoopFileSource?
    private var idleTimer: LoopTimer?
    private var partialLine: [UInt8] = []
    private var unsent = UnsentBytes()
    private var interest: LoopFileSource.Events = .readable
    private var readingPaused = false
    private var inputClosed = false
    private var draining = false
    private var closed = false
    /// Set by every read or send; the idle timer clears it and closes when it finds it clear.
    private var active = true
    private var cleanupRuns = 0

    init(fd: Int32, server: EchoServer, loop: Loop) {
        self.fd = fd
        self.configuration = server.configuration
        self.counters = server.counters
        self.server = server
        counters.update { $0.accepted += 1; $0.liveConnections += 1 }
        let source = LoopFileSource(fd: fd, events: .readable, label: "echo connection", onOwnerThreadOf: loop) { [self] events in
            handle(events)
        }
        self.source = source
        if let timeout = configuration.idleTimeout {
            // Cannot throw: the interval and tolerance are positive (checked by the configuration).
            idleTimer = try? LoopTimer(after: timeout, interval: timeout, tolerance: timeout / 2,
                                       label: "echo idle timeout", onOwnerThreadOf: loop) { [self] _ in checkIdle() }
        }
    }

    deinit { counters.update { $0.liveConnections -= 1 } }

    /// Adds the source and timer to `loop`; false (and the connection closed) when refused.
    func register(on loop: Loop) -> Bool {
        guard let source, case .added = loop.add(source, mode: configuration.mode) else {
            Diagnostics.report(.error, .echoConnectionFailed, "the loop refused a connection's source", item: "fd \(fd)")
            close(.error)
            return false
        }
        if let idleTimer { loop.add(idleTimer, mode: configuration.mode) }
        return true
    }

    // MARK: Events

    private func handle(_ events: LoopFileSource.Events) {
        if events.contains(.error) { return close(.error) }
        if events.contains(.readable) && !inputClosed && !readingPaused && !draining { readOnce() }
        if !closed && events.contains(.writable) { flush() }
        if !closed && events.contains(.hangUp) {
            // The peer shut down or vanished. Level-triggered, hang-up is reported every pass from
            // now on, so finish now: take what is still queued, send what fits, close.
            while !closed && !inputClosed && !readingPaused { if !readOnce() { break } }
            if !closed { flush() }
            close(.peer)
        }
        if !closed { updateInterest() }
    }

    /// One `read`; false when there was nothing to read.
    @discardableResult
    private func readOnce() -> Bool {
        guard let server else { return false }
        let outcome = SocketCalls.read(fd, into: server.scratch)
        switch outcome {
        case .transferred(let count):
            active = true
            received(UnsafeRawBufferPointer(rebasing: server.scratch[..<count]))
            return true
        case .wouldBlock:
            return false
        case .endOfFile:
            inputClosed = true
            if unsent.isEmpty { close(.peer) }
            return false
        case .failed:
            close(.error)   // ECONNRESET and the like: the peer is gone
            return false
        }
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        switch configuration.framing {
        case .bytes:
            echo(bytes)
        case .lines(let maximumLength):
            guard let lastNewline = bytes.lastIndex(of: UInt8(ascii: "\n")) else {
                partialLine.append(contentsOf: bytes)
                if partialLine.count > maximumLength {
                    counters.update { $0.protocolErrors += 1 }
                    close(.protocolError)
                }
                return
            }
            if partialLine.isEmpty {
                echo(UnsafeRawBufferPointer(rebasing: bytes[...lastNewline]))
            } else {
                // The kept start of a line and its end go out in one send.
                partialLine.append(contentsOf: bytes[...lastNewline])
                partialLine.withUnsafeBytes { echo($0) }
                partialLine.removeAll(keepingCapacity: partialLine.capacity <= 4096)
            }
            partialLine.append(contentsOf: bytes[(lastNewline + 1)...])
            if partialLine.count > maximumLength {
                counters.update { $0.protocolErrors += 1 }
                close(.protocolError)
            }
        }
    }

    /// Sends `bytes` at once when nothing waits before them; queues what does not fit.
    private func echo(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        if unsent.isEmpty {
            while !rest.isEmpty {
                switch SocketCalls.send(fd, rest) {
                case .transferred(let count):
                    counters.update { $0.bytesEchoed += count }
                    rest = UnsafeRawBufferPointer(rebasing: rest[count...])
                case .wouldBlock, .endOfFile:
                    return queue(rest)
                case .failed:
                    return close(.error)
                }
            }
            return
        }
        queue(rest)
    }

    private func queue(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        unsent.append(bytes)
        let count = unsent.count
        counters.update { $0.maximumUnsentBytes = max($0.maximumUnsentBytes, count) }
        if !readingPaused && count >= configuration.highWaterMark {
            readingPaused = true   // back-pressure: the peer's bytes wait in the kernel
            counters.update { $0.readPauses += 1; $0.pausedNow += 1 }
        }
    }

    /// Sends unsent bytes until done or the socket is full; resumes reading at the low mark.
    private func flush() {
        var failed = false
        while !unsent.isEmpty && !failed {
            var progressed = false
            unsent.consume { bytes in
                switch SocketCalls.send(fd, bytes) {
                case .transferred(let count):
                    progressed = true
                    counters.update { $0.bytesEchoed += count }
                    return count
                case .wouldBlock, .endOfFile:
                    return 0
                case .failed:
                    failed = true
                    return 0
                }
            }
            guard progressed else { break }
        }
        if failed { return close(.error) }
        active = true
        if readingPaused && unsent.count <= configuration.lowWaterMark {
            readingPaused = false
            counters.update { $0.readResumes += 1; $0.pausedNow -= 1 }
        }
        if unsent.isEmpty && (inputClosed || draining) { close(draining ? .shutdown : .peer) }
    }

    /// Reading unless paused, closed or draining; writing while bytes wait. One `epoll_ctl`
    /// only when that changes.
    private func updateInterest() {
        var wanted: LoopFileSource.Events = []
        if !readingPaused && !inputClosed && !draining { wanted.insert(.readable) }
        if !unsent.isEmpty { wanted.insert(.writable) }
        guard wanted != interest, let source else { return }
        do {
            try source.setInterest(wanted)
            interest = wanted
        } catch {
            Diagnostics.report(.error, .echoConnectionFailed, "changing a connection's interest: \(error)", item: "fd \(fd)")
            close(.error)
        }
    }

    private func checkIdle() {
        if active { active = false } else { close(.idle) }
    }

    // MARK: Shutdown and cleanup

    /// Stops reading; closes once the unsent bytes are out (or now, when there are none).
    func drain() {
        guard !closed else { return }
        draining = true
        if unsent.isEmpty { return close(.shutdown) }
        updateInterest()
    }

    /// Forgets the connection's loop items at once and defers closing the descriptor and
    /// releasing the object to the pool's next pop. Idempotent.
    func close(_ cause: CloseCause) {
        guard !closed else { return }
        closed = true
        let wasPaused = readingPaused
        counters.update {
            $0.closed += 1
            if wasPaused { $0.pausedNow -= 1 }
            switch cause {
            case .peer: $0.closedByPeer += 1
            case .idle: $0.closedIdle += 1
            case .error: $0.closedByError += 1
            case .shutdown: $0.closedByShutdown += 1
            case .protocolError: break
            }
        }
        source?.invalidate()   // epoll_ctl DEL while the descriptor is still open
        idleTimer?.invalidate()
        source = nil           // the cycles through the closures end here
        idleTimer = nil
        server?.connectionClosed(self)
        AutoreleasePool.deferCleanup(label: "echo connection cleanup") { [self] in runCleanup() }
    }

    /// The deferred half of `close`: exactly once per connection.
    private func runCleanup() {
        cleanupRuns += 1
        guard cleanupRuns == 1 else {
            counters.update { $0.duplicateCleanups += 1 }
            Diagnostics.report(.fault, .echoConnectionFailed, "a connection's cleanup ran again; refused", item: "fd \(fd)")
            return
        }
        closeDescriptor(fd, "an echo connection", item: "fd \(fd)")
        counters.update { $0.cleanupsRun += 1 }
    }
}
