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
/// flush-if-too-late, the lag monitor): `willCallOut` runs in order and `didCallOut` in reverse,
/// so they nest like brackets. Immutable: `loop.addCalloutInterceptor(_:)` installs a new chain,
/// so a callout walks a plain array with no lock (the slot itself is set before the loop runs or
/// on its thread, as `Loop.calloutInterceptor` requires).
///
/// ```swift
/// loop.addCalloutInterceptor(perCalloutPools)
/// loop.addCalloutInterceptor(lagMonitor)
/// ```
public final class LoopCalloutInterceptorChain: LoopCalloutInterceptor {
    /// The interceptors, in call order.
    public let interceptors: [any LoopCalloutInterceptor]

    public init(_ interceptors: [any LoopCalloutInterceptor]) { self.interceptors = interceptors }

    public func willCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        for interceptor in interceptors { interceptor.willCallOut(kind, label: label, loop: loop) }
    }

    public func didCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        // By index: `reversed()` on the existential array would allocate a copy per callout.
        var index = interceptors.count
        while index > 0 {
            index -= 1
            interceptors[index].didCallOut(kind, label: label, loop: loop)
        }
    }
}

extension Loop {
    /// Adds an interceptor beside any already installed (through a `LoopCalloutInterceptorChain`).
    /// Any thread; a running loop uses the new chain from its next pass.
    public func addCalloutInterceptor(_ interceptor: any LoopCalloutInterceptor) {
        updateCalloutInterceptor { current in
            let existing: [any LoopCalloutInterceptor]
            if let chain = current as? LoopCalloutInterceptorChain {
                existing = chain.interceptors
            } else if let single = current {
                existing = [single]
            } else {
                existing = []
            }
            return existing.isEmpty ? interceptor : LoopCalloutInterceptorChain(existing + [interceptor])
        }
    }

    /// Removes an interceptor added with `addCalloutInterceptor(_:)` (or set directly).
    /// Any thread; a running loop stops calling it from its next pass.
    public func removeCalloutInterceptor(_ interceptor: any LoopCalloutInterceptor) {
        updateCalloutInterceptor { current in
            if let chain = current as? LoopCalloutInterceptorChain {
                let rest = chain.interceptors.filter { $0 !== interceptor }
                return rest.count == 1 ? rest[0] : (rest.isEmpty ? nil : LoopCalloutInterceptorChain(rest))
            }
            return current === interceptor ? nil : current
        }
    }
}
