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
        let source = LoopSource(order: order, label: label, perform: perform)
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
    /// let port = harness.addPort("hid") { message in harness.recorder.log("touch") }
    /// ```
    @discardableResult
    public func addPort(_ label: String, mode: Loop.Mode = .default, order: Int = 0,
                        _ handler: @escaping (LoopPortSource.Message) -> Void) -> LoopPortSource {
        let port = LoopPortSource(order: order, label: label, handler: handler)
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
        let pipe = try LoopTestPipe(label: label, order: order, handler: handler) { [weak self] failure in
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
}
