import RunLoopCore

/// Lets several interceptors share a loop's single `calloutInterceptor` slot (per-callout pools,
/// flush-if-too-late, instruments). `willCallOut` runs in insertion order, `didCallOut` in reverse,
/// so interceptors nest like brackets.
///
/// ```swift
/// loop.addCalloutInterceptor(PerCalloutAutoreleasePools())
/// ```
public final class CalloutInterceptorChain: LoopCalloutInterceptor, @unchecked Sendable {
    // Guarded by `lock`; callouts read a snapshot so an interceptor may be added from another thread.
    private let lock = InterceptorLock()
    private var members: [any LoopCalloutInterceptor] = []

    public init(_ members: [any LoopCalloutInterceptor] = []) { self.members = members }

    /// Appends an interceptor; it sees callouts from the next one on.
    public func append(_ interceptor: any LoopCalloutInterceptor) {
        lock.withLock { members.append(interceptor) }
    }

    /// Removes an interceptor (identity).
    public func remove(_ interceptor: any LoopCalloutInterceptor) {
        lock.withLock { members.removeAll { $0 === interceptor } }
    }

    /// The interceptors, in call order.
    public var interceptors: [any LoopCalloutInterceptor] { lock.withLock { members } }

    public func willCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        for member in lock.withLock({ members }) { member.willCallOut(kind, label: label, loop: loop) }
    }

    public func didCallOut(_ kind: LoopEvent.Callout, label: String, loop: Loop) {
        for member in lock.withLock({ members }).reversed() { member.didCallOut(kind, label: label, loop: loop) }
    }
}

extension Loop {
    /// Adds an interceptor beside any already installed, through a `CalloutInterceptorChain`.
    public func addCalloutInterceptor(_ interceptor: any LoopCalloutInterceptor) {
        if let chain = calloutInterceptor as? CalloutInterceptorChain {
            chain.append(interceptor)
        } else if let existing = calloutInterceptor {
            calloutInterceptor = CalloutInterceptorChain([existing, interceptor])
        } else {
            calloutInterceptor = CalloutInterceptorChain([interceptor])
        }
    }

    /// Removes an interceptor added with `addCalloutInterceptor(_:)`.
    public func removeCalloutInterceptor(_ interceptor: any LoopCalloutInterceptor) {
        if let chain = calloutInterceptor as? CalloutInterceptorChain {
            chain.remove(interceptor)
        } else if calloutInterceptor === interceptor {
            calloutInterceptor = nil
        }
    }
}
