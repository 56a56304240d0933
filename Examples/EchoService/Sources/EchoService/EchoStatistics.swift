import Synchronization

/// A snapshot of an ``EchoServer``'s counters, readable from any thread.
///
/// Every closed connection is counted under exactly one ending — `closedByPeer`,
/// `halfCloseRefusals`, `closedByError`, `closedIdle`, `protocolErrors` or `closedByShutdown` —
/// so they add up to `closed`; how it closed (a lingering close the peer saw as an end of file,
/// or a reset) is counted apart in `resets`.
///
/// ```swift
/// let statistics = server.counters.snapshot
/// assert(statistics.cleanupsRun == statistics.closed)
/// ```
public struct EchoStatistics: Sendable, Equatable, CustomStringConvertible {
    /// Connections accepted.
    public var accepted = 0
    /// Connections closed (for any reason).
    public var closed = 0
    /// Deferred cleanups (descriptor closed, connection released) that ran.
    public var cleanupsRun = 0
    /// Cleanups that would have run a second time for the same connection (refused, reported).
    public var duplicateCleanups = 0
    /// Connection objects alive (created and not yet deinitialised).
    public var liveConnections = 0
    /// Times a connection stopped reading at the high-water mark.
    public var readPauses = 0
    /// Times a paused connection read again at the low-water mark.
    public var readResumes = 0
    /// Connections not reading right now.
    public var pausedNow = 0
    /// The most unsent bytes any connection held.
    public var maximumUnsentBytes = 0
    /// Bytes sent back.
    public var bytesEchoed = 0

    // How connections ended: each closed connection is counted under exactly one of these.

    /// The peer finished sending and got every reply, then the service closed.
    public var closedByPeer = 0
    /// The peer finished sending while replies waited and ``EchoConfiguration/allowHalfClosure``
    /// was false: closed at once, the replies dropped (``repliesDropped``).
    public var halfCloseRefusals = 0
    /// The peer reset the connection, or a call on it failed (ECONNRESET, EPIPE…).
    public var closedByError = 0
    /// Closed by the idle sweep (``EchoConfiguration/idleTimeout``).
    public var closedIdle = 0
    /// Closed after a protocol error (a line longer than the framing allows).
    public var protocolErrors = 0
    /// Closed by a shutdown.
    public var closedByShutdown = 0

    // How they closed, and what did not get through.

    /// Connections the service closed with a reset instead of an end of file: forced by a
    /// second shutdown request or the end of the shutdown grace, a lingering close that ran out
    /// of time, an idle peer that left replies unread, a refused half-close with replies.
    public var resets = 0
    /// Of `resets`: closes forced by a second shutdown request or the end of the grace period.
    public var forcedCloses = 0
    /// Of `resets`: lingering closes whose peer was still sending at ``EchoConfiguration/lingerTime``.
    public var lingerExpired = 0
    /// Connections kept after their peer finished sending, to send the replies still waiting.
    public var halfClosedKept = 0
    /// Bytes read and not echoed: input after a shutdown, an idle timeout or a protocol error
    /// began (read and discarded by the lingering close), and the over-long line itself.
    public var bytesDiscarded = 0
    /// Reply bytes that were waiting to be sent when their connection closed without them.
    public var repliesDropped = 0

    public var description: String {
        "accepted \(accepted), closed \(closed) (peer \(closedByPeer), half-close refused \(halfCloseRefusals), "
            + "error \(closedByError), idle \(closedIdle), protocol \(protocolErrors), shutdown \(closedByShutdown); "
            + "resets \(resets): forced \(forcedCloses), linger expired \(lingerExpired)), cleanups \(cleanupsRun) "
            + "(duplicates \(duplicateCleanups)), live \(liveConnections), half-closed kept \(halfClosedKept), "
            + "read pauses \(readPauses)/resumes \(readResumes), max unsent \(maximumUnsentBytes) B, "
            + "echoed \(bytesEchoed) B, discarded \(bytesDiscarded) B, replies dropped \(repliesDropped) B"
    }
}

/// The live counters behind ``EchoStatistics``: written on the loop thread, read anywhere.
/// One uncontended mutex per update, which is nothing beside the system call it counts.
public final class EchoCounters: Sendable {
    private let statistics = Mutex(EchoStatistics())

    init() {}

    func update(_ body: (inout EchoStatistics) -> Void) { statistics.withLock { body(&$0) } }

    /// The counters now (exact once the server has finished).
    public var snapshot: EchoStatistics { statistics.withLock { $0 } }
}
