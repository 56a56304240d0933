/// One thing a loop did: an activity notification, a callout, a sleep or a wake.
///
/// Delivered to ``Loop/eventSink`` on the loop's thread, except inputs
/// (``Kind/input(_:fromOwnerThread:)``), which come on the thread that made them.
///
/// ```swift
/// final class Printer: LoopEventSink {
///     func loop(_ loop: Loop, emitted event: LoopEvent) { print(event.kind, event.label) }
/// }
/// ```
public struct LoopEvent: Sendable {
    public enum Kind: Sendable, Equatable {
        /// Emitted once per notified activity, before its observers run, exactly where CF calls
        /// DoObservers (the mode's observer mask has the bit; BW/AW only when the pass is not polling).
        case activity(Loop.Activity)
        /// A callout is about to run; `label` is the item's label.
        case calloutBegin(Callout)
        /// A callout returned.
        case calloutEnd(Callout)
        /// About to wait (after BW); only for waits that may block (not polling passes).
        case sleep
        /// Back from such a wait (before AW).
        case wake
        /// A run passed R1–R4 and is about to notify Entry.
        case runBegin
        /// A run ended (after Exit) with this result.
        case runEnd(Loop.RunResult)
        /// An input to the loop, reported before it takes effect and, unlike every other kind,
        /// on the thread that made it; `fromOwnerThread` says whether that was the loop's.
        /// `label` is the source's or port's label ("" for a wake-up); `mode` is the running
        /// mode (`.default` when the loop is not running). Only while some loop has a sink.
        case input(Input, fromOwnerThread: Bool)
    }

    /// What an ``Kind/input(_:fromOwnerThread:)`` event reports.
    public enum Input: Sendable, Equatable {
        /// `LoopSource.signal()` on a source in this loop (S1).
        case signal
        /// `LoopPortSource.send` to a port in this loop; the bytes, or nil for a value message.
        case send(bytes: [UInt8]?)
        /// `Loop.wakeUp()` (W3: it counts unless the run ignores wake-ups).
        case wakeUp
    }

    /// The kind of item a callout belongs to.
    public enum Callout: Sendable, Equatable {
        case observer, block, source0, source1, fileSource, timer, mainQueue
        /// A Swift Concurrency job run by the loop as an executor (see `Loop+Executor`).
        case job
    }

    public let kind: Kind
    /// The item's label for callouts; the activity's short name for activities; "" otherwise.
    public let label: String
    public let mode: Loop.Mode
    /// The value of ``Loop/passCount`` when the event happened.
    public let pass: UInt64
    /// The loop clock's time when the event happened.
    public let time: LoopInstant

    public init(kind: Kind, label: String, mode: Loop.Mode, pass: UInt64, time: LoopInstant) {
        self.kind = kind
        self.label = label
        self.mode = mode
        self.pass = pass
        self.time = time
    }
}

/// Receives every event of a loop (see ``LoopEvent``). Called on the loop's thread, except for
/// inputs, which any thread may report.
///
/// ```swift
/// loop.eventSink = recorder   // any class conforming to LoopEventSink
/// ```
public protocol LoopEventSink: AnyObject, Sendable {
    func loop(_ loop: Loop, emitted event: LoopEvent)
}

/// Wraps every callout, e.g. to push and pop a per-callout autorelease pool or to flush a
/// transaction that is late. Called on the loop's thread with the loop's lock released, inside
/// the callout's span: begin event, `willCallOut`, the callout, `didCallOut`, end event.
///
/// ```swift
/// final class Pools: LoopCalloutInterceptor {
///     func willCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) { /* push */ }
///     func didCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) { /* pop */ }
/// }
/// ```
public protocol LoopCalloutInterceptor: AnyObject, Sendable {
    func willCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop)
    func didCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop)
}
