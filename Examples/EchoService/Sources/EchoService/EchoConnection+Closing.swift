import CEchoShims
import RunLoopKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How a connection closes without losing what is in flight: the replies it holds go out, its
/// writing side is shut down (the peer reads every reply, then an end of file), and input is
/// read and discarded until the peer closes too, goes quiet for `lingerTimeout`, or
/// `lingerTime` runs out — nginx's lingering close. Closing a socket with unread input would
/// make the kernel send a reset, and a reset destroys replies the peer has not read yet.
extension EchoConnection {
    /// Starts closing for `ending` (a shutdown, an idle timeout, a protocol error): the replies
    /// held go out first, then the lingering close. Idempotent once closing.
    func beginClosing(_ ending: Ending) {
        switch phase {
        case .open, .peerFinished:
            if readingPaused { resumeReading() }   // closing reads (and discards) again
            guard unsent.isEmpty else {
                phase = .draining(ending)
                if source != nil { updateInterest() }
                return
            }
            if inputEnded { close(ending) } else { startLingering(ending) }
        case .draining, .lingering, .closed:
            break
        }
    }

    /// Shuts down the writing side and waits for the peer's end of input, discarding what comes.
    func startLingering(_ ending: Ending) {
        shutDownWritingSide()
        guard !isClosed else { return }
        phase = .lingering(ending)   // the idle sweep passes it by: the linger timer takes over
        active = false
        let interval = configuration.lingerTimeout
        // Cannot throw: the interval and tolerance are positive (checked by the configuration).
        if let loop = server?.loop, let timer = try? LoopTimer(after: interval, interval: interval, tolerance: interval / 10,
                                                               label: "echo linger", onOwnerThreadOf: loop, { [self] _ in lingerTick() }) {
            linger = Linger(timer: timer, ticksLeft: max(1, Int((configuration.lingerTime / interval).rounded(.up))))
            loop.add(timer, mode: configuration.mode)
        }
        if source != nil { updateInterest() }
    }

    /// Every `lingerTimeout`: quiet since the last tick → close (nothing is unread, no reset);
    /// still sending at the linger time's end → close with a reset, counted.
    private func lingerTick() {
        guard case .lingering(let ending) = phase else { return }
        if !active {
            // Take what arrived since the last read, so nothing is unread at the close.
            for _ in 0..<8 where !isClosed { if !readOnce() { break } }
            if !isClosed { close(ending) }
            return
        }
        linger?.ticksLeft -= 1
        if (linger?.ticksLeft ?? 0) <= 0 {
            counters.update { $0.lingerExpired += 1 }
            return close(ending, reset: true)
        }
        active = false
    }

    /// The server's idle sweep, every `idleTimeout`: the first silent interval clears the flag,
    /// the second closes — with a lingering close when every reply went out, with a reset when
    /// the peer left them unread.
    func checkIdle() {
        if active {
            active = false
            return
        }
        switch phase {
        case .open:
            if unsent.isEmpty { beginClosing(.idle) } else { close(.idle, reset: true) }
        case .peerFinished:
            close(.idle, reset: true)   // the peer reads none of the replies left
        case .draining(let ending):
            close(ending, reset: true)
        case .lingering, .closed:
            break
        }
    }

    /// `shutdown(SHUT_WR)`: the peer reads what was sent, then an end of file. A peer already
    /// gone (ENOTCONN) ends the connection.
    func shutDownWritingSide() {
        if case .failure(let failure) = checked("shutdown(SHUT_WR)", { shutdown(fd, Int32(SHUT_WR)) }) {
            if failure.code != ENOTCONN {
                Diagnostics.report(.warning, .echoConnectionFailed, "shutting down a connection's writing side: \(failure)", item: "fd \(fd)")
            }
            close(.error)
        }
    }

    /// A shutdown's grace ended (or a second request came) with this connection not yet
    /// lingering, or lingering is cut short: close now with a reset, counted as forced.
    func forceClose(_ ending: Ending) {
        guard !isClosed else { return }
        counters.update { $0.forcedCloses += 1 }
        close(ending, reset: true)
    }

    /// Forgets the connection's loop items at once and defers closing the descriptor and
    /// releasing the object to the pool's next pop. `reset`: the close resets the connection
    /// (SO_LINGER 0) instead of ending it with an end of file, so the peer cannot take a cut-off
    /// echo for a complete one. Idempotent.
    func close(_ ending: Ending, reset: Bool = false) {
        guard !isClosed else { return }
        let wasPaused = readingPaused
        let dropped = unsent.count
        phase = .closed
        if reset {
            checked("setsockopt(SO_LINGER)") { echo_set_abortive_close(fd) }
                .reportingFailure(.echoConnectionFailed, "making a close abortive", item: "fd \(fd)", severity: .warning)
        }
        counters.update {
            $0.closed += 1
            if wasPaused { $0.pausedNow -= 1 }
            if reset { $0.resets += 1 }
            $0.repliesDropped += dropped
            switch ending {
            case .peerFinished: $0.closedByPeer += 1
            case .halfCloseRefused: $0.halfCloseRefusals += 1
            case .error: $0.closedByError += 1
            case .idle: $0.closedIdle += 1
            case .protocolError: $0.protocolErrors += 1
            case .shutdown: $0.closedByShutdown += 1
            }
        }
        source?.invalidate()   // epoll_ctl DEL while the descriptor is still open
        linger?.timer.invalidate()
        source = nil           // the cycles through the closures end here
        linger = nil
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
