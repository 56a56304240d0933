import PThreads
import CRunLoopShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A version-1 source: a message port between threads (what NSMachPort / CFMessagePort give
/// on Darwin).
///
/// Any thread may `send`; the handler receives each message, in order, on the loop's thread.
/// A pending message wakes a sleeping loop. The loop handles one port event — one message —
/// per pass (L-c: CF hands out one source1 per pass); handling it counts as a handled source.
///
/// The queue is bounded by default (``defaultCapacity``, as a Mach port has a queue limit): a
/// send to a full port throws or waits for room, so producers on other threads cannot outgrow
/// the consumer's memory. ``unbounded`` must be asked for by name.
///
/// Internally a port is an eventfd (readable while messages are queued) and a locked FIFO.
///
/// ```swift
/// let port = try LoopPortSource(label: "commands") { message in
///     if case .bytes(let b) = message { print("got", b) }
/// }
/// loop.add(port, mode: .default)
/// try port.send([1, 2, 3])      // from any thread
/// ```
public final class LoopPortSource: Sendable {
    public enum Message: Sendable {
        case bytes([UInt8])
        case value(any Sendable)
    }

    /// Why a message was not queued. Nothing was queued when one is thrown.
    public enum SendError: Error, Equatable, Sendable, CustomStringConvertible {
        /// The port was invalidated.
        case closed
        /// The queue holds `capacity` undelivered messages (a Mach port's queue limit), and
        /// (for a waiting send) still did when the wait ended.
        case full(capacity: Int)
        /// The task of a waiting ``LoopPortSource/sendWhenRoom(_:)`` was cancelled.
        case cancelled

        public var description: String {
            switch self {
            case .closed: "the port was invalidated"
            case .full(let capacity): "the port's queue is full (\(capacity) undelivered messages)"
            case .cancelled: "the sending task was cancelled while waiting for room"
            }
        }
    }

    /// The queue limit of a port whose creator names none: 1024 undelivered messages, the
    /// largest queue limit a Mach port may have (`MACH_PORT_QLIMIT_MAX`; Mach's own default, 5,
    /// suits one request at a time). A producer the loop does not control cannot grow memory
    /// without bound: a full queue holds 1024 messages (48 KiB of queue beside their payloads),
    /// and its sends throw ``SendError/full(capacity:)`` or wait for room. A larger limit buys
    /// no throughput: the port soak handles about as many messages per second with 256 as with
    /// 4096 (Docs/Services.md).
    public static let defaultCapacity = 1024
    /// Pass it as `capacity` for a queue without a limit: an explicit choice, for a producer
    /// whose pace the caller bounds itself. A producer that outruns the consumer then grows the
    /// queue, and the process's memory, without bound.
    public static let unbounded = Int.max

    public let order: Int
    public let label: String
    /// The most undelivered messages the queue holds; a send beyond it throws ``SendError/full(capacity:)``.
    public let capacity: Int
    /// The most messages the loop hands to the handler in one pass (CF: one); see the init.
    public let messagesPerPass: Int
    /// `sending`, not `Sendable`: only the thread of the one loop the port is bound to calls it
    /// (`ItemCore.boundLoop`), never two threads at once; hence `nonisolated(unsafe)`.
    nonisolated(unsafe) let handler: (Message) -> Void
    let core = ItemCore()
    /// Readable exactly while `queue` holds undelivered messages.
    let fd: Int32
    /// `nonisolated(unsafe)`, as every `var` here: only with `core.lock` held.
    private nonisolated(unsafe) var queue: [Message] = []
    private nonisolated(unsafe) var head = 0
    /// The write that makes `fd` readable failed (reported): the next send writes again.
    private nonisolated(unsafe) var signalFailed = false
    /// Senders blocked in `send(_:waitingUpTo:)` wait on it for room or invalidation.
    private let roomChanged = PThreadCondition()
    /// Tasks waiting in `sendWhenRoom`, resumed in arrival order as room appears.
    private nonisolated(unsafe) var roomWaiters: [(id: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    private nonisolated(unsafe) var nextWaiterID: UInt64 = 0

    /// - Parameters:
    ///   - order: ports ready in the same wait are not ordered by it (one port per pass, L-c);
    ///     kept for CF's API shape and shown in traces.
    ///   - label: the name traces and diagnostics use.
    ///   - capacity: the most undelivered messages the port queues (at least 1; default
    ///     ``defaultCapacity``, 1024; ``unbounded`` for none). A full queue makes `send` throw, or
    ///     a waiting send wait for room.
    ///   - messagesPerPass: the most messages one pass hands to the handler (at least 1;
    ///     default 1, CF's one port message per pass, L-c). A larger batch lets a consumer keep
    ///     up with fast producers; the port still counts as one handled source per pass.
    ///   - handler: called on the loop's thread with each message, in send order.
    /// - Throws: ``LoopError/systemCall(_:)`` when the port's eventfd cannot be created (the
    ///   process is out of descriptors or memory; also reported as `loop.system-call-failed`).
    public init(order: Int = 0, label: String = "source1", capacity: Int = LoopPortSource.defaultCapacity, messagesPerPass: Int = 1,
                handler: sending @escaping (Message) -> Void) throws(LoopError) {
        switch makeDescriptor("eventfd", for: "the descriptor of port '\(label)'", item: label, { rlk_eventfd_create() }).reported() {
        case .success(let fd): self.fd = fd.raw
        case .failure(let failure): throw .systemCall(failure)
        }
        self.order = order
        self.label = label
        self.capacity = max(capacity, 1)
        self.messagesPerPass = max(messagesPerPass, 1)
        self.handler = handler
    }

    deinit {
        closeDescriptor(fd, "the descriptor of port '\(label)'", item: label)
    }

    /// Queues bytes for the handler. Any thread; wakes the loop.
    /// - Throws: ``SendError`` when the port was invalidated or its queue is full.
    public func send(_ bytes: [UInt8]) throws(SendError) { try enqueue(.bytes(bytes)) }

    /// Queues a value for the handler. Any thread; wakes the loop.
    /// - Throws: ``SendError`` when the port was invalidated or its queue is full.
    public func send(value: any Sendable) throws(SendError) { try enqueue(.value(value)) }

    /// Queues `message`, waiting up to `timeout` for room when the queue is full (a Mach
    /// port's send timeout). Blocks the calling thread: never call it on the port's own loop
    /// thread, which is the one that makes room.
    ///
    /// - Throws: ``SendError/full(capacity:)`` when the queue was still full at the deadline,
    ///   ``SendError/closed`` when the port was (or got) invalidated.
    public func send(_ message: Message, waitingUpTo timeout: Duration) throws(SendError) {
        let now = MonotonicClock.shared.nowNanoseconds
        let deadline = timeout <= .zero ? now : Nanoseconds.add(now, Nanoseconds.from(timeout))
        if InputReporting.isActive { reportSend(message) }
        let signalled = try core.lock.withLock { () throws(SendError) -> Result<Int32, SystemCallError> in
            while core.valid && queue.count - head >= capacity {
                guard core.lock.wait(on: roomChanged, untilMonotonicNanoseconds: deadline) else { break }
            }
            return try appendLocked(message)
        }
        signalled.reportingFailure(.systemCallFailed, "waking the loop for port '\(label)'", item: label)
    }

    /// Queues `message`, suspending the task while the queue is full. Waiting tasks get room
    /// in the order they started waiting.
    ///
    /// - Throws: ``SendError/closed`` when the port was (or got) invalidated,
    ///   ``SendError/cancelled`` when the task was cancelled while waiting.
    public func sendWhenRoom(_ message: Message) async throws(SendError) {
        while true {
            let waiterID: UInt64? = try core.lock.withLock { () throws(SendError) -> UInt64? in
                guard core.valid else { throw SendError.closed }
                guard queue.count - head >= capacity else { return nil }
                nextWaiterID += 1
                return nextWaiterID
            }
            guard let waiterID else {
                do { try enqueue(message) } catch .full { continue } catch { throw error }
                return
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = core.lock.withLock { () -> Bool in
                        // Room, invalidation or cancellation may have come first.
                        if !core.valid || queue.count - head < capacity || Task.isCancelled { return true }
                        roomWaiters.append((waiterID, continuation))
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                let waiter = core.lock.withLock { () -> CheckedContinuation<Void, Never>? in
                    guard let index = roomWaiters.firstIndex(where: { $0.id == waiterID }) else { return nil }
                    return roomWaiters.remove(at: index).continuation
                }
                waiter?.resume()
            }
            if Task.isCancelled { throw SendError.cancelled }
        }
    }

    /// Messages queued and not yet delivered.
    public var pendingCount: Int { core.lock.withLock { queue.count - head } }

    public var isValid: Bool { core.isValid }

    /// Drops pending messages and removes the port from its loop.
    public func invalidate() {
        var waiters: [CheckedContinuation<Void, Never>] = []
        var drained = Unreported<UInt64>(0)
        let loops = core.invalidate(also: {
            queue.removeAll()
            head = 0
            drained = drainCounter(fd, "port '\(label)'")
            waiters = roomWaiters.map(\.continuation)
            roomWaiters.removeAll()
            roomChanged.broadcast()   // blocked senders see the port closed
        })
        drained.reported()   // the port's lock released
        guard let loops else { return }
        for waiter in waiters { waiter.resume() }
        for loop in loops { loop.purgeItem(self) }
    }

    private func enqueue(_ message: Message) throws(SendError) {
        if InputReporting.isActive { reportSend(message) }
        let signalled = try core.lock.withLock { () throws(SendError) -> Result<Int32, SystemCallError> in
            try appendLocked(message)
        }
        signalled.reportingFailure(.systemCallFailed, "waking the loop for port '\(label)'", item: label)
    }

    /// Appends `message` if the port is valid and has room. `core.lock` held.
    private func appendLocked(_ message: Message) throws(SendError) -> Result<Int32, SystemCallError> {
        guard core.valid else { throw SendError.closed }
        guard queue.count - head < capacity else { throw SendError.full(capacity: capacity) }
        queue.append(message)
        // Only the empty → non-empty transition makes the descriptor readable: one eventfd
        // write per burst, not one per message.
        guard queue.count - head == 1 || signalFailed else { return .success(0) }
        let signalled = valueOrErrno("write(eventfd)") { rlk_eventfd_signal(fd) }
        if case .failure = signalled { signalFailed = true } else { signalFailed = false }
        return signalled
    }

    /// The loop found the port readable with nothing queued: a drain that failed left the
    /// descriptor readable. Resets it, so the wait does not return for the port again.
    func dropStaleReadiness() {
        let drained = core.lock.withLock { () -> Unreported<UInt64> in
            head == queue.count ? drainCounter(fd, "port '\(label)'") : Unreported(0)
        }
        drained.reported()   // the port's lock released
    }

    /// The next message, keeping the eventfd readable while more remain. Taking one from a
    /// full queue makes room: one blocked sender or waiting task is let through.
    func takeOne() -> Message? {
        var drained = Unreported<UInt64>(0)
        let (message, waiter) = core.lock.withLock { () -> (Message?, CheckedContinuation<Void, Never>?) in
            guard core.valid, head < queue.count else { return (nil, nil) }
            let wasFull = queue.count - head >= capacity
            let message = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
                drained = drainCounter(fd, "port '\(label)'")
            } else if head >= 64 && head * 2 >= queue.count {
                queue.removeFirst(head)
                head = 0
            }
            guard wasFull else { return (message, nil) }
            roomChanged.broadcast()
            return (message, roomWaiters.isEmpty ? nil : roomWaiters.removeFirst().continuation)
        }
        drained.reported()   // the port's lock released
        waiter?.resume()
        return message
    }
}

/// Watches a file descriptor (socket, pipe, eventfd…) for readiness and calls the handler on
/// the loop's thread. The loop never reads or writes the descriptor: the handler does (unlike
/// CF on Linux, which reads 8 bytes from a version-1 source's fd).
///
/// Readiness is level-triggered: while the fd stays ready, every pass that waits reports it
/// again, one fd event per pass (L-c: CF hands out one source1 per pass), and counts as a
/// handled source.
///
/// The end of a connection comes as three events a handler tells apart (S9: the peer's
/// end of sending, a hang-up and an error are distinct events): ``Events/readClosed`` (the peer
/// will send nothing more, replies may still go out), ``Events/hangUp`` (nothing can go either
/// way) and ``Events/error``.
///
/// ```swift
/// let reader = LoopFileSource(fd: socket, events: [.readable, .readClosed], label: "socket") { events in
///     if events.contains(.readable) { /* read(socket, …) until EAGAIN; 0 is the end of input */ }
///     if events.contains(.readClosed) { /* the peer finished sending: answer, then shut down */ }
/// }
/// loop.add(reader, mode: .default)
/// ```
public final class LoopFileSource: Sendable {

    /// Readiness kinds. ``readable``, ``writable`` and ``readClosed`` are interests, reported
    /// only while asked for; ``hangUp`` and ``error`` are always reported when they happen.
    public struct Events: OptionSet, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Data (or an end of file: a `read` of 0) can be read (EPOLLIN).
        public static let readable = Events(rawValue: 1)
        /// Data can be written without blocking (EPOLLOUT).
        public static let writable = Events(rawValue: 2)
        /// Nothing can pass either way any more (EPOLLHUP): the connection was reset or closed
        /// in both directions, or every writer of a pipe closed it. Bytes already received may
        /// still be read; writes fail. Always reported.
        public static let hangUp = Events(rawValue: 4)
        /// The descriptor has a pending error (EPOLLERR): ECONNRESET after a reset, EPIPE on a
        /// pipe whose readers are gone; read it with `SO_ERROR` or the next `read`/`send`.
        /// Always reported.
        public static let error = Events(rawValue: 8)
        /// The peer will send nothing more: it shut down its writing side (a TCP FIN, or
        /// `shutdown(SHUT_WR)`; EPOLLRDHUP). Bytes it sent before may still wait to be read, and
        /// the descriptor may still be written: the connection is half-closed, not gone. An
        /// interest: it stays ready once it happened, so drop it from the interest once handled.
        public static let readClosed = Events(rawValue: 16)

        /// The kinds a source can ask for (the rest are always reported).
        static let interests: Events = [.readable, .writable, .readClosed]

        public var description: String {
            let names = [(Events.readable, "readable"), (.writable, "writable"), (.readClosed, "readClosed"),
                         (.hangUp, "hangUp"), (.error, "error")]
            return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
        }
    }

    public let fd: Int32
    /// The `.readable`/`.writable`/`.readClosed` bits of the current interest; guarded by
    /// `core.lock`. The pass hands a callout `ready & (interestBitsNow | hangUp | error)`, so the
    /// asked-for kinds pass only while asked for. (Beside `fd`, so the two share 8 bytes: a
    /// service holds one source per connection.)
    private nonisolated(unsafe) var interestBits: UInt32
    public let order: Int
    public let label: String
    /// `sending`, not `Sendable`: only the thread of the one loop the source is bound to calls
    /// it, never two threads at once; hence `nonisolated(unsafe)`.
    nonisolated(unsafe) let handler: (Events) -> Void
    let core = ItemCore()

    /// A source watching `fd`, level-triggered: the handler runs on every pass in which the
    /// descriptor is ready for something it is interested in, until that is consumed.
    ///
    /// - Parameters:
    ///   - fd: the descriptor to watch; the source never closes it.
    ///   - events: the initial interest (any of ``Events/readable``, ``Events/writable`` and
    ///     ``Events/readClosed``, or none — then only hang-up and error are reported); change it
    ///     with ``setInterest(_:)``.
    ///   - order: several fd sources ready in one pass run in ascending order.
    ///   - label: the name traces and diagnostics use.
    ///   - handler: called on the loop's thread with what is ready.
    public init(fd: Int32, events: Events, order: Int = 0, label: String = "fd", handler: sending @escaping (Events) -> Void) {
        self.fd = fd
        self.interestBits = events.rawValue & Events.interests.rawValue
        self.order = order
        self.label = label
        self.handler = handler
    }

    /// What the source is interested in now (readable, writable, readClosed).
    public var interest: Events { Events(rawValue: core.lock.withLock { interestBits }) }

    /// Changes the interest at once in every mode holding the source (`epoll_ctl` MOD; the
    /// source is not removed and re-added), from any thread — for example, stop reading while a
    /// connection's write buffer is full, or stop asking for ``Events/readClosed`` once seen.
    /// Hang-up and error stay reported.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// var ends: [Int32] = [0, 0]
    /// _ = pipe(&ends)
    /// let source = LoopFileSource(fd: ends[1], events: .writable) { _ in }
    /// loop.add(source, mode: .default)
    /// try source.setInterest([])   // back-pressure: stop asking for writability
    /// ```
    ///
    /// - Throws: the failed `epoll_ctl` (for example EBADF when the fd was closed); the
    ///   interest is then unchanged.
    public func setInterest(_ events: Events) throws(SystemCallError) {
        let bits = events.rawValue & Events.interests.rawValue
        let loop: Loop? = core.lock.withLock { core.firstLoopLocked }
        if let loop { try loop.modifyInterest(of: self, to: bits) }
        core.lock.withLock { interestBits = bits }
    }

    /// The interest bits; with `core.lock` held or from the loop under its lock.
    var interestBitsNow: UInt32 { core.lock.withLock { interestBits } }

    public var isValid: Bool { core.isValid }

    /// Removes the source from its loop; the descriptor itself is left alone.
    public func invalidate() {
        guard let loops = core.invalidate() else { return }
        for loop in loops { loop.purgeItem(self) }
    }
}
