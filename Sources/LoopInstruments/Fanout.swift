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

/// Runs several callout interceptors around each callout: `willCallOut` in order,
/// `didCallOut` in reverse order, so they nest like brackets.
///
/// ```swift
/// loop.calloutInterceptor = LoopCalloutInterceptorChain([perCalloutPool, lagMonitor])
/// ```
public final class LoopCalloutInterceptorChain: LoopCalloutInterceptor {
    public let interceptors: [any LoopCalloutInterceptor]

    public init(_ interceptors: [any LoopCalloutInterceptor]) { self.interceptors = interceptors }

    public func willCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        for interceptor in interceptors { interceptor.willCallOut(kind, label: label, loop: loop) }
    }

    public func didCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        for interceptor in interceptors.reversed() { interceptor.didCallOut(kind, label: label, loop: loop) }
    }
}
