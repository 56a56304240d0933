/// Why a commit ran.
public enum CommitReason: Sendable, Equatable, CustomStringConvertible {
    /// The run loop is about to sleep (observer at order 2000000, `kCFRunLoopBeforeWaiting`).
    case beforeWaiting
    /// A (possibly nested) run of the loop is returning (`kCFRunLoopExit`).
    case exit
    /// The outermost explicit `LayerTransaction.commit()`.
    case explicitCommit
    /// `LayerTransaction.flush()` / `CommitPipeline.flush()`.
    case flush
    /// `flushIfTooLate()`: pending work waited longer than the budget.
    case tooLate
    /// Anything else the host wants to name.
    case custom(String)

    public var description: String {
        switch self {
        case .beforeWaiting: return "beforeWaiting"
        case .exit: return "exit"
        case .explicitCommit: return "explicitCommit"
        case .flush: return "flush"
        case .tooLate: return "tooLate"
        case let .custom(name): return name
        }
    }
}

/// Identifies a layer in a snapshot without keeping it alive.
public struct LayerIdentity: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    public let serial: UInt64
    public var description: String { name }

    init(_ layer: Layer) {
        name = layer.name
        serial = layer.serial
    }
}

/// One layer displayed in a commit and the region it redrew.
public struct DisplayedLayer: Hashable, Sendable {
    public let layer: LayerIdentity
    public let dirtyRect: LayerRect
}

/// An immutable record of what one commit did; what the render server would be sent.
///
/// ```swift
/// let frame = log.frames.last!
/// frame.laidOut.map(\.name)      // ["root", "child"]
/// frame.displayed.map(\.dirtyRect)
/// ```
public struct CommitSnapshot: Sendable, Equatable {
    /// 1 for the pipeline's first commit, then +1 per commit.
    public let frameNumber: UInt64
    public let reason: CommitReason
    /// Layers laid out by this commit, in call order (incl. `layoutIfNeeded` calls made inside it).
    public let laidOut: [LayerIdentity]
    /// Layers displayed by this commit, in call order, with their dirty rects.
    public let displayed: [DisplayedLayer]
    /// Layers still needing layout after the round cap (they go to the next commit).
    public let layoutDeferred: [LayerIdentity]
    /// The pipeline clock when the commit started.
    public let startTime: LoopInstant
}

/// Receives each commit's snapshot (the "deliver to the render server" step).
///
/// ```swift
/// final class Printer: CommitSink {
///     func deliver(_ snapshot: CommitSnapshot) { print(snapshot.frameNumber, snapshot.laidOut) }
/// }
/// pipeline.sink = Printer()
/// ```
public protocol CommitSink: AnyObject {
    func deliver(_ snapshot: CommitSnapshot)
}

/// The default sink: keeps the most recent `capacity` snapshots.
///
/// ```swift
/// let log = FrameLog(capacity: 16)
/// pipeline.sink = log
/// // … commits …
/// log.frames.count   // ≤ 16
/// ```
public final class FrameLog: CommitSink {
    /// Oldest first.
    public private(set) var frames: [CommitSnapshot] = []
    public let capacity: Int
    /// Every snapshot ever delivered, including ones dropped for capacity.
    public private(set) var deliveredCount: UInt64 = 0

    /// - Parameter capacity: snapshots kept (≥ 1; default 64, so a long-running process does not
    ///   accumulate frames).
    public init(capacity: Int = 64) {
        precondition(capacity >= 1, "FrameLog capacity must be >= 1, got \(capacity)")
        self.capacity = capacity
    }

    public func deliver(_ snapshot: CommitSnapshot) {
        deliveredCount += 1
        if frames.count == capacity { frames.removeFirst() }
        frames.append(snapshot)
    }

    /// The most recent snapshot.
    public var lastFrame: CommitSnapshot? { frames.last }

    public func removeAll() { frames.removeAll() }
}
