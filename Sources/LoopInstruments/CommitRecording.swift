import RunLoopCore
import Transactions

extension CommitRecord {
    /// The plain record of a Transactions commit: phases `layout` (laid-out layers),
    /// `display` (displayed layers) and, when the round cap deferred some, `deferred`.
    ///
    /// ```swift
    /// recorder.record(CommitRecord(snapshot))
    /// ```
    public init(_ snapshot: CommitSnapshot) {
        var phases = [
            Phase(name: "layout", layers: snapshot.laidOut.map(\.name), start: snapshot.startTime),
            Phase(name: "display", layers: snapshot.displayed.map(\.layer.name)),
        ]
        if !snapshot.layoutDeferred.isEmpty {
            phases.append(Phase(name: "deferred", layers: snapshot.layoutDeferred.map(\.name)))
        }
        self.init(frame: snapshot.frameNumber, reason: snapshot.reason.description, phases: phases)
    }
}

/// A `CommitSink` that records every commit into a `TraceRecorder` and passes the snapshot
/// on to another sink (e.g. the pipeline's `FrameLog`).
///
/// ```swift
/// let frames = FrameLog()
/// pipeline.sink = TraceCommitSink(recorder: recorder, forwardingTo: frames)
/// ```
public final class TraceCommitSink: CommitSink {
    public let recorder: TraceRecorder
    public let next: (any CommitSink)?

    public init(recorder: TraceRecorder, forwardingTo next: (any CommitSink)? = nil) {
        self.recorder = recorder
        self.next = next
    }

    public func deliver(_ snapshot: CommitSnapshot) {
        recorder.record(CommitRecord(snapshot))
        next?.deliver(snapshot)
    }
}
