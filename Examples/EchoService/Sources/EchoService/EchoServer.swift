import RunLoopKit

/// A TCP echo service on a `Loop`: non-blocking accept on 127.0.0.1, per-connection read and
/// write buffers, back-pressure by high/low water marks, idle timeouts by one sweeping loop timer,
/// half-closed connections answered in full, lingering closes, connections released by the
/// autorelease pool at BeforeWaiting, and a graceful shutdown.
///
/// Create it on the loop's thread, before running the loop. The loop needs autorelease pools
/// popping at BeforeWaiting (`LoopAutoreleasePools` or `StandardObservers`); the closed
/// connections' descriptors are closed there.
///
/// ```swift
/// let loop = Loop.current
/// let pools = LoopAutoreleasePools(installedOn: loop)
/// let server = try EchoServer(configuration: EchoConfiguration(), loop: loop)
/// server.onFinished = { loop.stop() }
/// print("listening on 127.0.0.1:\(server.port)")
/// // loop.run() … until server.control.requestShutdown() from any thread
/// ```
public final class EchoServer {
    /// The configuration the server was created with.
    public let configuration: EchoConfiguration
    /// The port the server listens on.
    public let port: UInt16
    /// Counters, readable from any thread.
    public let counters = EchoCounters()
    /// Asks for a shutdown from any thread.
    public let control: EchoServerControl
    /// Called on the loop thread once a shutdown has closed every connection.
    public var onFinished: (() -> Void)?
    /// True once a shutdown has closed the listener and every connection.
    public private(set) var isFinished = false

    let loop: Loop
    /// What every connection reads from the server: one object, referenced by each.
    final class Shared {
        let configuration: EchoConfiguration
        let counters: EchoCounters
        /// The server's loop: connections live on its thread.
        let loop: Loop
        /// The server, for a connection to tell it that it closed.
        weak var server: EchoServer?
        init(_ configuration: EchoConfiguration, _ counters: EchoCounters, _ loop: Loop) {
            self.configuration = configuration
            self.counters = counters
            self.loop = loop
        }
    }
    let shared: Shared
    /// One read buffer for every connection: reads go here and are sent back at once.
    let scratch: UnsafeMutableRawBufferPointer
    private let listenerFD: Int32
    private var listener: LoopFileSource?
    private var acceptRetry: LoopTimer?
    private var graceTimer: LoopTimer?
    /// One repeating timer for every connection's silence (see ``EchoConfiguration/idleTimeout``).
    private var idleSweep: LoopTimer?
    private var connections = ConnectionTable()
    private var shuttingDown = false

    /// Listens on 127.0.0.1:`configuration.port` and starts accepting on `loop` (its
    /// current thread's loop by default).
    ///
    /// - Throws: ``EchoServerError``; nothing stays open or registered then.
    public init(configuration: EchoConfiguration, loop: Loop = .current) throws(EchoServerError) {
        if let problem = configuration.problem { throw .invalidConfiguration(problem) }
        guard loop.isOwnerThread else { throw .wrongThread }
        let socket: (fd: Int32, port: UInt16)
        do { socket = try SocketCalls.listenOnLoopback(port: configuration.port, backlog: configuration.backlog,
                                                             bufferSize: configuration.socketBufferSize) }
        catch { throw .systemCall(error) }
        self.configuration = configuration
        self.shared = Shared(configuration, counters, loop)
        self.loop = loop
        self.listenerFD = socket.fd
        self.port = socket.port
        self.scratch = .allocate(byteCount: configuration.readChunk, alignment: 16)
        self.control = EchoServerControl(loop: loop)
        shared.server = self
        let listener = LoopFileSource(fd: socket.fd, events: .readable, order: 1, label: "echo listener", onOwnerThreadOf: loop) { [unowned self] _ in
            acceptPending()
        }
        self.listener = listener
        let outcome = loop.add(listener, mode: configuration.mode)
        // Fully initialised: deinit closes the descriptor and frees the buffer.
        guard case .added = outcome else { throw .refused("\(outcome)") }
        control.install(mode: configuration.mode) { [weak self] in self?.beginShutdown() }
        if let timeout = configuration.idleTimeout {
            // Cannot throw: the interval and tolerance are positive (checked by the configuration).
            idleSweep = try? LoopTimer(after: timeout, interval: timeout, tolerance: timeout / 2,
                                       label: "echo idle sweep", onOwnerThreadOf: loop) { [unowned self] _ in sweepIdle() }
            if let idleSweep { loop.add(idleSweep, mode: configuration.mode) }
        }
    }

    deinit {
        listener?.invalidate()
        acceptRetry?.invalidate()
        graceTimer?.invalidate()
        idleSweep?.invalidate()
        control.uninstall()
        for connection in connections.all { connection.forceClose(.shutdown) }
        if listener != nil { closeDescriptor(listenerFD, "the echo listener") }
        scratch.deallocate()
    }

    /// Connections open now.
    public var connectionCount: Int { connections.count }

    // MARK: Accepting

    /// Accepts what is queued, up to `limit` per pass so a connection storm cannot hold the
    /// loop; the connections accepted.
    @discardableResult
    private func acceptPending(limit: Int = 64) -> [EchoConnection] {
        var accepted: [EchoConnection] = []
        for _ in 0..<limit {
            switch SocketCalls.accept(listenerFD) {
            case .accepted(let fd):
                SocketCalls.disableNagle(fd).reportingFailure(.echoConnectionFailed, "setting TCP_NODELAY", severity: .warning)
                let connection = EchoConnection(fd: fd, server: self)
                connections.insert(connection)
                if connection.register(on: loop) { accepted.append(connection) }
            case .wouldBlock:
                return accepted
            case .aborted:
                continue
            case .outOfResources(let failure):
                pauseAccepting(failure)
                return accepted
            case .failed(let failure):
                Diagnostics.report(.error, .echoAcceptFailed, "accepting: \(failure)", item: "port \(port)")
                return accepted
            }
        }
        return accepted
    }

    /// Out of descriptors: level-triggered, the listener would spin; stop listening for 100 ms.
    private func pauseAccepting(_ failure: SystemCallError) {
        Diagnostics.report(.warning, .echoAcceptFailed, "accepting paused for 100 ms: \(failure)", item: "port \(port)")
        guard let listener, acceptRetry == nil, (try? listener.setInterest([])) != nil else { return }
        acceptRetry = try? LoopTimer(after: .milliseconds(100), label: "echo accept retry", onOwnerThreadOf: loop) { [weak self] _ in
            guard let self, let listener = self.listener else { return }
            self.acceptRetry = nil
            do { try listener.setInterest(.readable) } catch {
                Diagnostics.report(.error, .echoAcceptFailed, "resuming accepting: \(error)", item: "port \(self.port)")
            }
        }
        if let acceptRetry { loop.add(acceptRetry, mode: configuration.mode) }
    }

    /// Every connection's silence, checked at once: one timer instead of one per connection,
    /// so a silent connection still closes between one and two timeouts after its last byte.
    private func sweepIdle() {
        for connection in connections.all { connection.checkIdle() }
    }

    func connectionClosed(_ connection: EchoConnection) {
        connections.remove(connection)
        if shuttingDown && connections.isEmpty { finish() }
    }

    // MARK: Shutdown

    /// Stops accepting, lets every connection send the replies it holds (up to
    /// `shutdownGrace`) and close with a lingering close, then calls ``onFinished``. Connections
    /// still holding replies when the grace ends are closed with a reset (counted). A second
    /// call forces the shutdown (``forceShutdown()``). On the loop thread; from elsewhere use
    /// ``control``.
    public func beginShutdown() {
        guard !shuttingDown else { return forceShutdown() }
        shuttingDown = true
        stopListening(acceptingWhatIsQueued: true)
        for connection in connections.all { connection.beginClosing(.shutdown) }
        guard !connections.isEmpty else { return finish() }
        graceTimer = try? LoopTimer(after: configuration.shutdownGrace, label: "echo shutdown grace", onOwnerThreadOf: loop) { [weak self] _ in
            guard let self else { return }
            for connection in self.connections.all where !connection.isLingering { connection.forceClose(.shutdown) }
        }
        if let graceTimer { loop.add(graceTimer, mode: configuration.mode) }
    }

    /// Closes every connection now, with a reset (counted in ``EchoStatistics/forcedCloses``),
    /// then calls ``onFinished``: the second signal of a service that must stop. Idempotent.
    public func forceShutdown() {
        shuttingDown = true
        stopListening(acceptingWhatIsQueued: false)
        for connection in connections.all { connection.forceClose(.shutdown) }
        if connections.isEmpty { finish() }
    }

    /// Invalidates the listener and closes its socket (deferred). With `acceptingWhatIsQueued`,
    /// the connections the kernel completed but nobody accepted yet are accepted first, so
    /// they get the lingering close of a shutdown instead of the reset a closing listener sends
    /// them.
    private func stopListening(acceptingWhatIsQueued: Bool) {
        guard let listener else { return }
        if acceptingWhatIsQueued { acceptPending(limit: Int(configuration.backlog)) }
        listener.invalidate()
        self.listener = nil
        acceptRetry?.invalidate()
        acceptRetry = nil
        let fd = listenerFD
        AutoreleasePool.deferCleanup(label: "echo listener cleanup") { closeDescriptor(fd, "the echo listener") }
    }

    private func finish() {
        guard !isFinished else { return }
        isFinished = true
        graceTimer?.invalidate()
        graceTimer = nil
        idleSweep?.invalidate()
        idleSweep = nil
        control.uninstall()
        onFinished?()
    }
}
