import RunLoopKit

extension LoopTestHarness {
    /// Reports, as one failure, everything the test left behind: items still registered on the
    /// loop (that the harness did not make), timers still scheduled, blocks and queued work
    /// never run, inputs the harness made that still hold a signal, messages or data, pools
    /// still pushed, and transactions left open. Returns the findings (empty when clean).
    ///
    /// ```swift
    /// harness.assertClean()   // e.g. in the middle of a test, after removing what it added
    /// ```
    @discardableResult
    public func assertClean(fileID: String = #fileID, filePath: StaticString = #filePath,
                            line: UInt = #line, column: UInt = #column) -> [String] {
        let findings = leftovers()
        if !findings.isEmpty {
            report("The test left \(findings.count) thing\(findings.count == 1 ? "" : "s") behind:\n"
                   + findings.map { "  - " + $0 }.joined(separator: "\n"),
                   at: LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
        }
        return findings
    }

    /// ``assertClean(fileID:filePath:line:column:)``, then tears everything down: the standard
    /// observers, the harness's sources, ports and pipes (closed), and the loop. Later calls do
    /// nothing and return no findings. ``run(pools:flushIfTooLate:maxPassesPerRun:reporter:fileID:filePath:line:column:_:)``
    /// calls it at the end of its body.
    @discardableResult
    public func finish(fileID: String = #fileID, filePath: StaticString = #filePath,
                       line: UInt = #line, column: UInt = #column) -> [String] {
        guard !isFinished else { return [] }
        let findings = assertClean(fileID: fileID, filePath: filePath, line: line, column: column)
        isFinished = true
        standardObservers.uninstall()
        activityObserver.invalidate()
        control.observer.invalidate()
        owned.closeAll()
        loop.eventSink = nil
        pipeline.sink = FrameLog(capacity: 1)
        loop.tearDown()   // also drops the interceptors, which hold the pipeline (and so the loop)
        return findings
    }

    /// One line per thing left behind.
    func leftovers() -> [String] {
        let inventory = loop.inventory
        var found: [String] = []
        found += registeredItems(inventory)
        found += inventory.pendingBlocks.map { "block '\($0.label)' for \($0.modes.map(\.name).joined(separator: ", ")) never ran" }
        found += inventory.pendingAsyncLabels.map { "submitted work '\($0)' never ran" }
        found += ownedInputsStillLoaded()
        found += poolsLeftPushed()
        found += transactionsLeftOpen()
        return found
    }

    /// Items on the loop the harness did not make, grouped by item
    /// with the modes holding it.
    private func registeredItems(_ inventory: LoopInventory) -> [String] {
        var lines: [String] = []
        var seen: [ObjectIdentifier: Int] = [:]
        func note(_ object: AnyObject, _ describe: @autoclosure () -> String, mode: Loop.Mode) {
            if let index = seen[ObjectIdentifier(object)] {
                lines[index] += ", \(mode)"
            } else {
                seen[ObjectIdentifier(object)] = lines.count
                lines.append(describe() + " is still in \(mode)")
            }
        }
        let infrastructure = Set(infrastructureObservers.map(ObjectIdentifier.init))
        for items in inventory.modes {
            for observer in items.observers where !infrastructure.contains(ObjectIdentifier(observer)) && !owned.owns(observer) {
                note(observer, "observer '\(observer.label)' (order \(observer.order))", mode: items.mode)
            }
            for source in items.sources0 where !owned.owns(source) {
                note(source, "source0 '\(source.label)'", mode: items.mode)
            }
            for port in items.ports where !owned.owns(port) {
                note(port, "port '\(port.label)'", mode: items.mode)
            }
            for file in items.fileSources where !owned.owns(file) {
                note(file, "fd source '\(file.label)' (fd \(file.fd))", mode: items.mode)
            }
            for timer in items.timers where !owned.owns(timer) {
                let repeating = timer.interval > .zero ? ", repeating every \(timer.interval)" : ""
                note(timer, "timer '\(timer.label)' (next fire at \(timer.nextFireDate)\(repeating))", mode: items.mode)
            }
        }
        return lines
    }

    /// The observers the harness installed: the standard set, the recorder's and its own.
    private var infrastructureObservers: [LoopObserver] {
        let standard = standardObservers
        let commits = standard.commits
        return [activityObserver, control.observer, standard.eventObserver, commits.beforeCommitObserver,
                commits.commitObserver, commits.afterCommitObserver, commits.runLevelObserver]
            + [standard.pools?.entryObserver, standard.pools?.exitObserver].compactMap { $0 }
    }

    /// The harness's own inputs that still hold work nobody ran.
    private func ownedInputsStillLoaded() -> [String] {
        var lines: [String] = []
        for source in owned.sources where source.isSignalled {
            lines.append("source0 '\(source.label)' is signalled and was never performed")
        }
        for port in owned.ports where port.pendingCount > 0 {
            lines.append("port '\(port.label)' holds \(port.pendingCount) undelivered message(s)")
        }
        for pipe in owned.pipes where !readiness(of: pipe.source).isEmpty {
            lines.append("fd source '\(pipe.source.label)' is ready and was never handled")
        }
        for timer in owned.timers where timer.isValid && timer.interval == .zero {
            lines.append("timer '\(timer.label)' never fired (due at \(timer.nextFireDate))")
        }
        return lines
    }

    private func poolsLeftPushed() -> [String] {
        var lines: [String] = []
        if let depth = standardObservers.pools?.depth, depth > 0 {
            lines.append("\(depth) autorelease pool(s) pushed by the run-loop observers are still pushed (a run did not reach Exit)")
        }
        let pending = AutoreleasePool.statistics.pendingEntries - poolEntriesAtStart
        if pending > 0 {
            lines.append("\(pending) autorelease pool entr\(pending == 1 ? "y is" : "ies are") pending on this thread "
                         + "(a push without its pop, or objects autoreleased outside any pool)")
        }
        return lines
    }

    private func transactionsLeftOpen() -> [String] {
        var lines: [String] = []
        let depth = pipeline.explicitTransactionDepth
        if depth > 0 {
            lines.append("\(depth) explicit transaction\(depth == 1 ? " was" : "s were") begun and never committed (TX8)")
        }
        if pipeline.needsCommit {
            lines.append("marks on \(pipeline.pendingLayerCount) layer(s) were never committed: no BeforeWaiting came "
                         + "after them (TX6)")
        }
        let callbacks = pipeline.pendingPostCommitCallbackCount
        if callbacks > 0 {
            lines.append("\(callbacks) post-commit callback(s) wait for a commit that never came (TX15)")
        }
        return lines
    }
}
