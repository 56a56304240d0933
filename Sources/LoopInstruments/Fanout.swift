import PThreadLocking
import RunLoopCore

/// Forwards every loop event to several sinks, in order (a loop has one `eventSink`).
///
/// ```swift
/// loop.eventSink = LoopEventFanout([recorder, myOtherSink])
/// ```
public final class LoopEventFanout: LoopEventSink {
    public let sinks: [any LoopEventSink]

    public init(_ sinks: [any LoopEventSink]) { self.sinks = sinks }

    public func loop(_ loop: Loop, emitted event: LoopEvent) {
        for sink in sinks { sink.loop(loop, emitted: event) }
    }
}

/// Lets several interceptors share a loop's single `calloutInterceptor` slot (per-callout pools,
/// flush-if-too-late, the lag monitor): `willCallOut` runs in insertion order and `didCallOut` in
/// reverse, so they nest like brackets. Use `loop.addCalloutInterceptor(_:)` rather than
/// building one by hand.
///
/// ```swift
/// loop.addCalloutInterceptor(perCalloutPools)
/// loop.addCalloutInterceptor(lagMonitor)
/// ```
public final class LoopCalloutInterceptorChain: LoopCalloutInterceptor, @unchecked Sendable {
    // `members` is guarded by `lock`; each callout iterates a snapshot, so an interceptor may be
    // added or removed from another thread while the loop runs.
    private let lock = PThreadMutex()
    private var members: [any LoopCalloutInterceptor]

    public init(_ interceptors: [any LoopCalloutInterceptor] = []) { members = interceptors }

    /// The interceptors, in call order.
    public var interceptors: [any LoopCalloutInterceptor] { lock.withLock { members } }

    /// Appends an interceptor; it sees callouts from the next one on.
    public func append(_ interceptor: any LoopCalloutInterceptor) {
        lock.withLock { members.append(interceptor) }
    }

    /// Removes an interceptor (by identity).
    public func remove(_ interceptor: any LoopCalloutInterceptor) {
        lock.withLock { members.removeAll { $0 === interceptor } }
    }

    public func willCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        for member in lock.withLock({ members }) { member.willCallOut(kind, label: label, loop: loop) }
    }

    public func didCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        for member in lock.withLock({ members }).reversed() { member.didCallOut(kind, label: label, loop: loop) }
    }
}

extension Loop {
    /// Adds an interceptor beside any already installed, through a `LoopCalloutInterceptorChain`.
    public func addCalloutInterceptor(_ interceptor: any LoopCalloutInterceptor) {
        if let chain = calloutInterceptor as? LoopCalloutInterceptorChain {
            chain.append(interceptor)
        } else if let existing = calloutInterceptor {
            calloutInterceptor = LoopCalloutInterceptorChain([existing, interceptor])
        } else {
            calloutInterceptor = LoopCalloutInterceptorChain([interceptor])
        }
    }

    /// Removes an interceptor added with `addCalloutInterceptor(_:)` (or set directly).
    public func removeCalloutInterceptor(_ interceptor: any LoopCalloutInterceptor) {
        if let chain = calloutInterceptor as? LoopCalloutInterceptorChain {
            chain.remove(interceptor)
        } else if calloutInterceptor === interceptor {
            calloutInterceptor = nil
        }
    }
}
