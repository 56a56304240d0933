import RunLoopKit

extension LoopTestHarness {
    /// Makes a source0 and adds it to `mode`; the harness invalidates it at teardown.
    ///
    /// ```swift
    /// let source = harness.addSource("events") { harness.recorder.log("event") }
    /// ```
    @discardableResult
    public func addSource(_ label: String, mode: Loop.Mode = .default, order: Int = 0,
                          _ perform: @escaping () -> Void) -> LoopSource {
        let source = LoopSource(order: order, label: label, onOwnerThreadOf: loop, perform: perform)
        owned.sources.append(source)
        loop.add(source, mode: mode)
        return source
    }

    /// Signals `source` and wakes the loop, as `CFRunLoopSourceSignal` followed by
    /// `CFRunLoopWakeUp` does (a signal alone does not wake a loop, S1).
    public func signal(_ source: LoopSource) {
        source.signal()
        loop.wakeUp()
    }

    /// Makes a port source and adds it to `mode`; the harness invalidates it at teardown.
    ///
    /// ```swift
    /// let port = try harness.addPort("hid") { message in harness.recorder.log("touch") }
    /// ```
    ///
    /// - Throws: `LoopError.systemCall(_:)` when the port's descriptor cannot be created.
    @discardableResult
    public func addPort(_ label: String, mode: Loop.Mode = .default, order: Int = 0,
                        _ handler: @escaping (LoopPortSource.Message) -> Void) throws(LoopError) -> LoopPortSource {
        let port = try LoopPortSource(order: order, label: label, onOwnerThreadOf: loop, handler: handler)
        owned.ports.append(port)
        loop.add(port, mode: mode)
        return port
    }

    /// Sends bytes to `port` (any port of the loop); a refused send (closed or full) is reported.
    public func send(_ bytes: [UInt8] = [0], to port: LoopPortSource, fileID: String = #fileID,
                     filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column) {
        do {
            try port.send(bytes)
        } catch {
            report("send to port '\(port.label)' was refused: \(error)",
                   at: LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
        }
    }

    /// Makes a pipe watched by an fd source in `mode` (see ``LoopTestPipe``); the harness closes
    /// it at teardown.
    /// - Throws: `SystemCallError` when the pipe cannot be made (out of descriptors).
    public func addFileSource(_ label: String, mode: Loop.Mode = .default, order: Int = 0,
                              _ handler: @escaping (LoopFileSource.Events) -> Void) throws(SystemCallError) -> LoopTestPipe {
        let location = createdAt
        let pipe = try LoopTestPipe(label: label, order: order, loop: loop, handler: handler) { [weak self] failure in
            self?.report("reading the harness pipe '\(label)' failed: \(failure)", at: location)
        }
        owned.pipes.append(pipe)
        if case .refused(let reason) = loop.add(pipe.source, mode: mode) {
            report("the fd source '\(label)' was not added to \(mode): \(reason)", at: location)
        }
        return pipe
    }

    /// Makes `pipe`'s fd source ready (writes a byte); the next wait of a mode holding it ends
    /// for it.
    public func makeReady(_ pipe: LoopTestPipe, fileID: String = #fileID, filePath: StaticString = #filePath,
                          line: UInt = #line, column: UInt = #column) {
        if let failure = pipe.writeByte() {
            report("making '\(pipe.source.label)' ready failed: \(failure)",
                   at: LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
        }
    }

    /// Makes an observer and adds it to `mode` (default: the common modes, like the standard
    /// observers); the harness invalidates it at teardown.
    ///
    /// ```swift
    /// harness.addObserver("early", activities: .beforeWaiting, order: 1_000_000) { _ in layer.setNeedsLayout() }
    /// ```
    @discardableResult
    public func addObserver(_ label: String, activities: Loop.Activity, order: Int = 0, mode: Loop.Mode = .common,
                            _ callout: @escaping (Loop.Activity) -> Void) -> LoopObserver {
        let observer = LoopObserver(activities: activities, order: order, label: label, onOwnerThreadOf: loop) { _, activity in
            callout(activity)
        }
        owned.observers.append(observer)
        loop.add(observer, mode: mode)
        return observer
    }

    /// Makes a timer first firing `delay` from now (then every `interval`, unless zero) and adds
    /// it to `mode`; the harness invalidates it at teardown, and reports a one-shot timer that
    /// never fired.
    /// - Throws: `LoopError` for a negative interval or tolerance.
    @discardableResult
    public func addTimer(_ label: String, after delay: Duration, interval: Duration = .zero, tolerance: Duration = .zero,
                         mode: Loop.Mode = .default, _ callout: @escaping (LoopTimer) -> Void) throws(LoopError) -> LoopTimer {
        let timer = try LoopTimer(after: delay, clock: clock, interval: interval, tolerance: tolerance, label: label,
                                  loop.ownerThreadCallout(label, callout))
        owned.timers.append(timer)
        loop.add(timer, mode: mode)
        return timer
    }

    /// Queues `work` as a block for `mode` (B1; no wake-up, as `CFRunLoopPerformBlock`). The
    /// work stays on the loop's thread, so it may use the test's non-`Sendable` values.
    public func perform(_ label: String = "block", mode: Loop.Mode = .default, _ work: @escaping () -> Void) {
        let bound = LoopBound(work, loop: loop)
        loop.perform(inMode: mode, label: label) { bound.value() }
    }

    /// Queues `work` on the loop's queue, which behaves as the main queue does on a main loop
    /// (X4, and the fast path of L-a). The work stays on the loop's thread.
    public func submit(_ label: String = "mainQueue", _ work: @escaping () -> Void) {
        let bound = LoopBound(work, loop: loop)
        loop.submit(label: label) { bound.value() }
    }

    /// Records a line in the trace (a `log(…)` step), as `NSLog` lines appear in the published logs.
    public func log(_ text: String) { recorder.log(text) }
}
