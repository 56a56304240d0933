import RunLoopKit

/// One accepted connection: its descriptor, fd source, read buffer (a partial line) and write
/// buffer (unsent bytes), and a linger timer while it lingers. Lives on the server's loop thread.
///
/// Its life is a line of phases: open (reading and echoing) → the peer finished sending
/// (replies still going out) or the service is closing it (draining: replies going out, input
/// discarded) → lingering (writing side shut down, input discarded until the peer closes) →
/// closed. Closing is in `EchoConnection+Closing.swift`.
///
/// Its silence is checked by the server's one idle sweep (``checkIdle()``), not by a timer of its
/// own: a loop timer per connection cost about 870 bytes each (measured with 10,000
/// connections), nearly as much as the rest of the connection.
///
/// The source's and linger timer's closures hold the connection strongly; `close` breaks that
/// cycle and hands the connection to the autorelease pool through a deferred cleanup, which closes
/// the descriptor when the pool pops at BeforeWaiting. Until then the fd number cannot be
/// reused, so no event later in the same pass can reach a new connection by mistake.
final class EchoConnection {
    /// Why the connection ended; each closed connection is counted under exactly one.
    enum Ending { case peerFinished, halfCloseRefused, error, idle, protocolError, shutdown }

    enum Phase: Equatable {
        /// Reading and echoing.
        case open
        /// The peer finished sending; the replies still waiting go out, then the connection closes.
        case peerFinished
        /// The service is closing the connection: the replies it holds go out, input is discarded.
        case draining(Ending)
        /// The service's writing side is shut down; input is discarded until the peer closes,
        /// goes quiet, or the linger time runs out.
        case lingering(Ending)
        case closed
    }

    /// The lingering close's timer and how many of its ticks are left before `lingerTime` runs
    /// out; a connection has one only while it lingers.
    final class Linger {
        let timer: LoopTimer
        var ticksLeft: Int
        init(timer: LoopTimer, ticksLeft: Int) {
            self.timer = timer
            self.ticksLeft = ticksLeft
        }
    }

    // The fields are laid out for size: with thousands of idle connections, the object is most
    // of what each costs. Everything smaller than a pointer shares the first 8 bytes after the
    // object's header, so the object is 72 bytes, in an 80-byte malloc block (96 before).
    let fd: Int32
    /// The interest last given to the source (its 3 bits: `LoopFileSource.Events` in a byte).
    private var interestBits = UInt8(LoopFileSource.Events([.readable, .readClosed]).rawValue)
    var phase = Phase.open
    private var flags: Flags = [.active]
    var cleanupRuns: UInt8 = 0
    /// What the server shares with every connection: its configuration, counters, loop and
    /// the server itself (one reference per connection, not a copy of each).
    let shared: EchoServer.Shared
    var source: LoopFileSource?
    var linger: Linger?
    var partialLine: [UInt8] = []
    var unsent = UnsentBytes()

    /// The connection's yes-or-no state, one bit each.
    private struct Flags: OptionSet {
        let rawValue: UInt8
        static let readingPaused = Flags(rawValue: 1)
        static let inputEnded = Flags(rawValue: 2)
        static let readClosedSeen = Flags(rawValue: 4)
        static let active = Flags(rawValue: 8)

        subscript(member: Flags) -> Bool {
            get { contains(member) }
            set { if newValue { insert(member) } else { remove(member) } }
        }
    }

    var configuration: EchoConfiguration { shared.configuration }
    var counters: EchoCounters { shared.counters }
    var server: EchoServer? { shared.server }
    var interest: LoopFileSource.Events {
        get { LoopFileSource.Events(rawValue: UInt32(interestBits)) }
        set { interestBits = UInt8(newValue.rawValue) }
    }
    /// Reading stopped while the unsent bytes are above the high-water mark.
    var readingPaused: Bool { get { flags[.readingPaused] } set { flags[.readingPaused] = newValue } }
    /// A `read` returned 0: the peer will send nothing more.
    var inputEnded: Bool { get { flags[.inputEnded] } set { flags[.inputEnded] = newValue } }
    /// `.readClosed` was reported (and so is no longer asked for).
    var readClosedSeen: Bool { get { flags[.readClosedSeen] } set { flags[.readClosedSeen] = newValue } }
    /// Set by every read or send; the idle sweep and the linger timer clear it and act when they
    /// find it clear.
    var active: Bool { get { flags[.active] } set { flags[.active] = newValue } }

    init(fd: Int32, server: EchoServer) {
        self.fd = fd
        self.shared = server.shared
        counters.update { $0.accepted += 1; $0.liveConnections += 1 }
        // The handler captures the connection and nothing else: a closure over one object
        // reference needs no allocation of its own, where the connection in a `LoopBound` cost
        // the bound's box and the closure's context, 80 bytes a connection (measured with 19,000;
        // the `onOwnerThreadOf:` initialiser, about 300). `nonisolated(unsafe)` because the
        // connection is not Sendable: the source is bound to this loop, whose thread alone calls
        // its handler, and `handleOnLoopThread` checks that at every call, as a LoopBound would.
        nonisolated(unsafe) let connection = self
        source = LoopFileSource(fd: fd, events: interest, label: "echo connection") { events in
            connection.handleOnLoopThread(events)
        }
    }

    deinit { counters.update { $0.liveConnections -= 1 } }

    /// Adds the source to `loop`; false (and the connection closed) when refused.
    func register(on loop: Loop) -> Bool {
        guard let source, case .added = loop.add(source, mode: configuration.mode) else {
            Diagnostics.report(.error, .echoConnectionFailed, "the loop refused a connection's source", item: "fd \(fd)")
            close(.error)
            return false
        }
        return true
    }

    var isClosed: Bool { phase == .closed }

    /// Whether the connection is in its lingering close (its replies are all out).
    var isLingering: Bool {
        if case .lingering = phase { return true }
        return false
    }

    /// Whether input read now is echoed (open) or discarded (the service is closing).
    private var echoesInput: Bool { phase == .open }

    // MARK: Events

    private func handleOnLoopThread(_ events: LoopFileSource.Events) {
        precondition(shared.loop.isOwnerThread, "an echo connection's events must come on its loop's thread")
        handle(events)
    }

    func handle(_ events: LoopFileSource.Events) {
        // S9: a pending error (a reset) ends the connection; nothing more passes either way.
        if events.contains(.error) { return close(.error) }
        if events.contains(.readClosed) { peerClosedItsSide() }
        if !isClosed && events.contains(.readable) { readOnce() }
        if !isClosed && events.contains(.writable) { flush() }
        if !isClosed && events.contains(.hangUp) { hungUp() }
        if !isClosed { updateInterest() }
    }

    /// `.readClosed` (S9: the peer will send nothing more, replies may still go out). The bytes
    /// before its end are still to be read; only a refused half-close acts now, even while
    /// reading is paused (SwiftNIO closes on `inputClosed` unless half-closure is allowed).
    private func peerClosedItsSide() {
        readClosedSeen = true   // level-triggered: stop asking (updateInterest)
        if phase == .open && !configuration.allowHalfClosure && !unsent.isEmpty {
            close(.halfCloseRefused, reset: true)
        }
    }

    /// `.hangUp` (S9: nothing passes either way). After the service's own shutdown of its
    /// writing side this is the peer's end of file arriving: the clean end of a lingering
    /// close. Otherwise the connection was reset or closed under the replies.
    private func hungUp() {
        // Take what is still queued (at most a few reads: the peer can send nothing more).
        for _ in 0..<8 where !isClosed && !inputEnded { if !readOnce() { break } }
        guard !isClosed else { return }
        switch phase {
        case .lingering(let ending): close(ending)
        case .peerFinished where unsent.isEmpty: close(.peerFinished)
        default: close(.error)
        }
    }

    /// One `read`; false when there was nothing to read.
    @discardableResult
    func readOnce() -> Bool {
        guard let server else { return false }
        switch SocketCalls.read(fd, into: server.scratch) {
        case .transferred(let count):
            active = true
            let bytes = UnsafeRawBufferPointer(rebasing: server.scratch[..<count])
            if echoesInput { received(bytes) } else { counters.update { $0.bytesDiscarded += count } }
            return true
        case .wouldBlock:
            return false
        case .endOfFile:
            inputEnded = true
            peerFinishedSending()
            return false
        case .failed:
            close(.error)   // ECONNRESET and the like: the peer is gone
            return false
        }
    }

    /// A read of 0: the peer finished sending. Open: its last partial line is complete, and the
    /// connection closes once every reply is out (allowHalfClosure) or at once. Closing: the
    /// lingering close got what it waited for.
    private func peerFinishedSending() {
        switch phase {
        case .open:
            if case .lines = configuration.framing, !partialLine.isEmpty {
                partialLine.withUnsafeBytes { echo($0) }   // the end of input ends the last line
                partialLine = []
                guard !isClosed else { return }
            }
            if unsent.isEmpty { return finishAfterPeer() }
            guard configuration.allowHalfClosure else { return close(.halfCloseRefused, reset: true) }
            phase = .peerFinished
            counters.update { $0.halfClosedKept += 1 }
        case .draining(let ending):
            if unsent.isEmpty { close(ending) }   // else: closes once the replies are out
        case .lingering(let ending):
            close(ending)
        case .peerFinished, .closed:
            break
        }
    }

    /// Every reply to a peer that finished sending is out: shut down the writing side (the peer
    /// reads an end of file after the last reply) and close. Nothing is left unread, so the
    /// close sends no reset.
    func finishAfterPeer() {
        shutDownWritingSide()
        if !isClosed { close(.peerFinished) }
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        switch configuration.framing {
        case .bytes:
            echo(bytes)
        case .lines(let maximumLength):
            guard let lastNewline = bytes.lastIndex(of: UInt8(ascii: "\n")) else {
                partialLine.append(contentsOf: bytes)
                if partialLine.count > maximumLength { lineTooLong() }
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
            guard !isClosed else { return }
            partialLine.append(contentsOf: bytes[(lastNewline + 1)...])
            if partialLine.count > maximumLength { lineTooLong() }
        }
    }

    /// A protocol error: the over-long line is dropped (counted as discarded); the lines before
    /// it go out, then a lingering close.
    private func lineTooLong() {
        let dropped = partialLine.count
        partialLine = []
        counters.update { $0.bytesDiscarded += dropped }
        beginClosing(.protocolError)
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

    /// Sends unsent bytes until done or the socket is full; resumes reading at the low mark;
    /// moves a closing connection on once its replies are out.
    func flush() {
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
            active = true
        }
        if failed { return close(.error) }
        if readingPaused && unsent.count <= configuration.lowWaterMark { resumeReading() }
        guard unsent.isEmpty else { return }
        switch phase {
        case .peerFinished: finishAfterPeer()
        case .draining(let ending): inputEnded ? close(ending) : startLingering(ending)
        default: break
        }
    }

    func resumeReading() {
        guard readingPaused else { return }
        readingPaused = false
        counters.update { $0.readResumes += 1; $0.pausedNow -= 1 }
    }

    /// What the phase needs: reading while open and not paused, or while closing (to discard);
    /// `.readClosed` until seen; writing while bytes wait. One `epoll_ctl` only when that changes.
    func updateInterest() {
        var wanted: LoopFileSource.Events = []
        switch phase {
        case .open:
            if !readingPaused && !inputEnded { wanted.insert(.readable) }
            if !readClosedSeen { wanted.insert(.readClosed) }
        case .draining, .lingering:
            if !inputEnded { wanted.insert(.readable) }
        case .peerFinished, .closed:
            break
        }
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
}
