import RunLoopKit

/// How an ``EchoServer`` listens, frames, buffers, times out and closes.
///
/// ```swift
/// var configuration = EchoConfiguration()
/// configuration.framing = .lines(maximumLength: 4096)
/// configuration.highWaterMark = 128 * 1024
/// configuration.lowWaterMark = 32 * 1024
/// configuration.idleTimeout = .seconds(10)
/// configuration.lingerTime = .seconds(10)
/// ```
public struct EchoConfiguration: Sendable {
    /// What the server sends back.
    public enum Framing: Sendable, Equatable {
        /// Every byte, as soon as it is read.
        case bytes
        /// Complete lines (ending in `\n`) only; a partial line waits in the connection's read
        /// buffer, and the peer's end of input ends it. A partial line longer than
        /// `maximumLength` bytes is a protocol error: it is dropped, and the connection closes
        /// after the lines before it went out (a lingering close).
        case lines(maximumLength: Int)
    }

    /// TCP port on 127.0.0.1; 0 lets the kernel pick one (read it from ``EchoServer/port``).
    public var port: UInt16 = 0
    /// `listen(2)` backlog.
    public var backlog: Int32 = 1024
    /// Echo every byte (the default) or complete lines only.
    public var framing: Framing = .bytes
    /// Bytes read per readable event (one `read` per event, so a busy connection cannot hold
    /// the loop; level-triggered readiness brings it back next pass).
    public var readChunk = 64 * 1024
    /// Unsent bytes at which a connection stops reading (its interest drops `.readable`).
    public var highWaterMark = 256 * 1024
    /// Unsent bytes at or below which a paused connection reads again.
    public var lowWaterMark = 64 * 1024
    /// A connection that neither reads nor writes for this long is closed (checked by one
    /// repeating loop timer of the server that sweeps every connection, so it closes between
    /// one and two timeouts of silence): with a lingering close when every reply went out, with a reset when the peer
    /// left replies unread; nil: never.
    public var idleTimeout: Duration? = .seconds(60)
    /// The kernel's send and receive buffer per connection (SO_SNDBUF/SO_RCVBUF, set on the
    /// listener so accepted sockets inherit it); nil leaves the kernel's autotuning, which on
    /// Linux lets a receive buffer grow to `tcp_rmem`'s maximum (often many MiB) while the
    /// service has stopped reading.
    public var socketBufferSize: Int?
    /// Whether a connection whose peer finished sending (shut down its writing side: a read of
    /// 0) is kept until every reply has gone out — then the service shuts down its own writing
    /// side and closes — (true, the default), or closed at once, its unsent replies dropped and
    /// counted (false). SwiftNIO's `ChannelOptions.allowRemoteHalfClosure` is the same choice
    /// (its default is false).
    public var allowHalfClosure = true
    /// The longest a lingering close reads and discards the peer's input before it gives up and
    /// closes (nginx's `lingering_time`, 30 s by default). A lingering close — after a
    /// shutdown, an idle timeout or a protocol error — shuts down the service's writing side,
    /// so the peer reads every reply and then an end of file, and keeps reading until the peer
    /// closes too: closing with unread input would make the kernel answer with a reset, which
    /// can destroy replies the peer has not read yet. Running out is counted
    /// (``EchoStatistics/lingerExpired``) and ends with a reset.
    public var lingerTime: Duration = .seconds(30)
    /// How long a lingering close waits for more input before it closes (nginx's
    /// `lingering_timeout`, 5 s by default); checked like the idle timeout, so the close comes
    /// between one and two of these after the last input. Nothing is unread then, so the peer
    /// sees no reset.
    public var lingerTimeout: Duration = .seconds(5)
    /// How long a shutdown lets connections send the replies they hold; a connection still
    /// holding some then is closed with a reset (counted in ``EchoStatistics/forcedCloses``).
    /// Connections already lingering finish their lingering close.
    public var shutdownGrace: Duration = .seconds(5)
    /// The loop mode the server's sources and timers run in.
    public var mode: Loop.Mode = .default

    /// The defaults: an ephemeral port, bytes framing, 64 KiB reads, 256/64 KiB water marks,
    /// a 60 s idle timeout, half-closed connections kept, lingering 30 s at most and 5 s after
    /// the last input, a 5 s shutdown grace, the default mode.
    public init() {}

    /// Why the configuration cannot be used; nil when it can.
    public var problem: String? {
        if readChunk < 1 { return "readChunk must be at least 1 (is \(readChunk))" }
        if lowWaterMark < 0 || lowWaterMark >= highWaterMark {
            return "lowWaterMark must be at least 0 and below highWaterMark (are \(lowWaterMark) and \(highWaterMark))"
        }
        if case .lines(let maximum) = framing, maximum < 1 { return "lines' maximumLength must be at least 1 (is \(maximum))" }
        if let idleTimeout, idleTimeout <= .zero { return "idleTimeout must be positive or nil (is \(idleTimeout))" }
        if lingerTimeout <= .zero { return "lingerTimeout must be positive (is \(lingerTimeout))" }
        if lingerTime < lingerTimeout { return "lingerTime must be at least lingerTimeout (are \(lingerTime) and \(lingerTimeout))" }
        if shutdownGrace < .zero { return "shutdownGrace must not be negative (is \(shutdownGrace))" }
        if let size = socketBufferSize, size < 1 || size > Int(Int32.max) { return "socketBufferSize must be 1…Int32.max (is \(size))" }
        if backlog < 1 { return "backlog must be at least 1 (is \(backlog))" }
        return nil
    }
}
