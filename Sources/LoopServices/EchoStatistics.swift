import PThreads

/// A snapshot of an ``EchoServer``'s counters, readable from any thread.
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
    /// Closes because the peer closed or hung up.
    public var closedByPeer = 0
    /// Closes by the idle timer.
    public var closedIdle = 0
    /// Closes after a failed call (ECONNRESET, EPIPE…) or an error event.
    public var closedByError = 0
    /// Closes by a shutdown (drained, or cut at the grace period's end).
    public var closedByShutdown = 0
    /// Partial lines longer than the framing allows.
    public var protocolErrors = 0

    public var description: String {
        "accepted \(accepted), closed \(closed) (peer \(closedByPeer), idle \(closedIdle), error \(closedByError), "
            + "shutdown \(closedByShutdown), protocol \(protocolErrors)), cleanups \(cleanupsRun) (duplicates "
            + "\(duplicateCleanups)), live \(liveConnections), read pauses \(readPauses)/resumes \(readResumes), "
            + "max unsent \(maximumUnsentBytes) B, echoed \(bytesEchoed) B"
    }
}

/// The live counters behind ``EchoStatistics``: written on the loop thread, read anywhere.
/// One uncontended mutex per update, which is nothing beside the system call it counts.
public final class EchoCounters: Sendable {
    private let statistics = Locked(EchoStatistics())

    init() {}

    func update(_ body: (inout EchoStatistics) -> Void) { statistics.withLock(body) }

    /// The counters now (exact once the server has finished).
    public var snapshot: EchoStatistics { statistics.withLock { $0 } }
}
