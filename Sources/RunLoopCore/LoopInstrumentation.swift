/// What a loop reports its events to and wraps its callouts with.
struct Instrumentation {
    var sink: (any LoopEventSink)?
    var interceptor: (any LoopCalloutInterceptor)?
}

extension Loop {
    /// Receives every activity and callout (see ``LoopEvent``). Costs one branch when nil.
    ///
    /// Settable from any thread at any time: a running loop picks the new sink up at the start
    /// of its next pass or run, or when it wakes from a wait.
    ///
    /// ```swift
    /// final class Printer: LoopEventSink {
    ///     func loop(_ loop: Loop, emitted event: LoopEvent) { print(event.kind, event.label) }
    /// }
    /// let loop = Loop(clock: VirtualClock())
    /// loop.eventSink = Printer()
    /// ```
    public var eventSink: (any LoopEventSink)? {
        get { instrumentation.withLock { $0.sink } }
        set { updateInstrumentation { $0.sink = newValue } }
    }

    /// Wraps every callout (per-callout pools, flush-if-too-late). Costs one branch when nil.
    /// Settable from any thread; takes effect at the start of the loop's next pass or run, or
    /// when it wakes from a wait.
    /// To combine several, see `addCalloutInterceptor(_:)` in LoopInstruments, built on
    /// ``updateCalloutInterceptor(_:)``.
    public var calloutInterceptor: (any LoopCalloutInterceptor)? {
        get { instrumentation.withLock { $0.interceptor } }
        set { updateInstrumentation { $0.interceptor = newValue } }
    }

    /// Replaces the interceptor with `transform(current)` atomically, so two threads adding or
    /// removing interceptors at once lose neither change.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// loop.updateCalloutInterceptor { current in current }   // no change
    /// ```
    public func updateCalloutInterceptor(
        _ transform: (_ current: (any LoopCalloutInterceptor)?) -> (any LoopCalloutInterceptor)?
    ) {
        updateInstrumentation { $0.interceptor = transform($0.interceptor) }
    }

    func updateInstrumentation(_ change: (inout Instrumentation) -> Void) {
        instrumentation.withLock {
            let hadSink = $0.sink != nil
            change(&$0)
            if hadSink != ($0.sink != nil) { InputReporting.loopsWithSink.wrappingAdd(hadSink ? -1 : 1, ordering: .relaxed) }
        }
        instrumentationVersion.wrappingAdd(1, ordering: .releasing)
    }

    /// Copies the configured sink and interceptor into the owner thread's fields when they
    /// changed: one atomic load otherwise. Owner thread, at the start of every run and pass and
    /// after every wait.
    @inline(__always)
    func refreshInstrumentation() {
        assertOwnerThread("Loop pass")
        let version = instrumentationVersion.load(ordering: .acquiring)
        guard version != owned.activeInstrumentationVersion else { return }
        adoptInstrumentation(version)
    }

    /// Out of line: inlined, the optimiser began the exclusive access to `instrumentation`
    /// once per run even when nothing changed (76 instructions, callgrind).
    @inline(never)
    private func adoptInstrumentation(_ version: UInt64) {
        let current = instrumentation.withLock { $0 }
        owned.adopt(sink: current.sink, interceptor: current.interceptor)
        owned.activeInstrumentationVersion = version
    }
}
