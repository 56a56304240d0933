import RunLoopKit

extension LoopTestHarness {
    /// How long a turn's run may last on the virtual clock: only reached if the control
    /// observer could not end the turn, and then reported.
    static let turnTimeout = Duration.seconds(86_400 * 365)

    /// Runs one turn of `mode` without letting time pass: one run whose passes do everything
    /// due now (sources, ports, fds, blocks, queued work, due timers) up to the first pass that
    /// would wait; its BeforeWaiting observers run (the commit at 2000000 among them), then the
    /// run is stopped, so the trace ends `beforeWaiting · afterWaiting · exit`. A run that never
    /// reaches BeforeWaiting within ``maxPassesPerRun`` passes is stopped and reported.
    ///
    /// ```swift
    /// harness.signal(source)
    /// harness.runTurn()
    /// ```
    @discardableResult
    public func runTurn(mode: Loop.Mode = .default, fileID: String = #fileID, filePath: StaticString = #filePath,
                        line: UInt = #line, column: UInt = #column) -> Loop.RunResult {
        runOneTurn(mode: mode, caller: "runTurn()",
                   location: LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// Runs turns of `mode` while something is due now — a signalled source0, a port message,
    /// a ready fd, a block or queued work for the mode, a due timer, marks waiting for a commit —
    /// without letting time pass (timers due later stay pending: see
    /// ``advance(by:mode:fileID:filePath:line:column:)``). Returns the turns run (0 when nothing
    /// was due). After `maxTurns` turns with work still due it stops and reports what is left.
    ///
    /// ```swift
    /// harness.send([1], to: port)
    /// harness.runUntilIdle()
    /// ```
    @discardableResult
    public func runUntilIdle(mode: Loop.Mode = .default, maxTurns: Int = 100, fileID: String = #fileID,
                             filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column) -> Int {
        let location = LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        var turns = 0
        var lastTurnStart = recorder.entries.last?.sequence
        while !dueNow(in: mode).isEmpty {
            guard turns < maxTurns else {
                let lastTurn = recorder.entries.filter { entry in lastTurnStart.map { entry.sequence > $0 } ?? true }
                let steps = LoopStepPlacement.placements(in: lastTurn).map(\.step.description).joined(separator: " · ")
                report("runUntilIdle() did not settle after \(maxTurns) turns of \(mode); still due: "
                       + dueNow(in: mode).joined(separator: "; ") + ". The last turn ran: " + steps, at: location)
                return turns
            }
            lastTurnStart = recorder.entries.last?.sequence
            runOneTurn(mode: mode, caller: "runUntilIdle()", location: location)
            turns += 1
        }
        return turns
    }

    /// Lets `duration` of virtual time pass with `mode` running, as `run(mode:timeout:)` does
    /// on a real clock: timers fire at their deadlines (the clock jumps from one to the next),
    /// and the run ends when the time is up (L-e: `.timedOut` at exactly the deadline). When
    /// the mode has nothing to run (R3) the clock is simply moved. A zero duration is one
    /// polling pass (L2). A negative duration is reported and nothing runs.
    ///
    /// ```swift
    /// harness.advance(by: .milliseconds(250))   // fires the timers due in the next 250 ms
    /// ```
    @discardableResult
    public func advance(by duration: Duration, mode: Loop.Mode = .default, fileID: String = #fileID,
                        filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column) -> Loop.RunResult {
        let location = LoopTestSourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        guard checkUsable("advance(by:)", at: location) else { return .finished }
        guard duration >= .zero else {
            report("advance(by: \(duration)): a clock cannot go back; nothing ran", at: location)
            return .finished
        }
        joinControl(mode)
        let target = clock.now.advanced(by: duration)
        var result = Loop.RunResult.finished
        var runs = 0
        repeat {
            let remaining = clock.now.duration(to: target)
            let (ended, overrun) = control.during(endingTurnAtBeforeWaiting: false, passLimit: maxPassesPerRun) {
                pipeline.asCurrent { loop.run(mode: mode, timeout: remaining) }
            }
            result = ended
            runs += 1
            if let overrun {
                report(overrunMessage("advance(by: \(duration))", overrun, mode: mode), at: location)
                return result
            }
            if result == .finished {
                clock.advance(to: target)
            } else if runs >= maxPassesPerRun && clock.now < target {
                report("advance(by: \(duration)): \(runs) runs of \(mode) ended early (\(result)) without reaching "
                       + "\(target); something stops the loop every time", at: location)
                return result
            }
        } while clock.now < target
        return result
    }

    /// One turn (see `runTurn`), reporting as `caller`.
    @discardableResult
    func runOneTurn(mode: Loop.Mode, caller: String, location: LoopTestSourceLocation) -> Loop.RunResult {
        guard checkUsable(caller, at: location) else { return .finished }
        joinControl(mode)
        let (result, overrun) = control.during(endingTurnAtBeforeWaiting: true, passLimit: maxPassesPerRun) {
            pipeline.asCurrent { loop.run(mode: mode, timeout: Self.turnTimeout) }
        }
        if let overrun {
            report(overrunMessage(caller, overrun, mode: mode), at: location)
        } else if result == .timedOut {
            report("\(caller): the turn was not ended at BeforeWaiting (is the harness's control observer still in "
                   + "\(mode)?); the run timed out and the clock jumped to \(clock.now)", at: location)
        }
        return result
    }

    /// What a run stopped by the pass guard was doing, from the steps of its last pass.
    func overrunMessage(_ caller: String, _ overrun: HarnessControl.Overrun, mode: Loop.Mode) -> String {
        let lastPass = recorder.entries.filter { $0.pass == overrun.lastPass }
        let steps = LoopStepPlacement.placements(in: lastPass, selection: LoopStepSelection(kinds: [.callouts]))
        let busy = steps.map { "\($0.step) (\($0.rule))" }.joined(separator: "; ")
        return "\(caller): the run of \(mode) made \(overrun.passes) passes without waiting and was stopped. "
            + "Its last pass ran: \(busy.isEmpty ? "no callout" : busy). "
            + "A pass that handles a source0 does not wait (L-a), and a source0 that signals itself runs again in the next pass (S3)."
    }

    /// Puts the harness's own observers into `mode` when it is not a common mode (they are in
    /// the common modes from the start), so its turns end and its activities are recorded.
    func joinControl(_ mode: Loop.Mode) {
        guard mode != .common, !loop.commonModes.contains(mode) else { return }
        loop.add(control.observer, mode: mode)
        loop.add(activityObserver, mode: mode)
    }

    /// False (and reported) once the harness is finished: its loop is torn down.
    func checkUsable(_ caller: String, at location: LoopTestSourceLocation) -> Bool {
        if isFinished { report("\(caller) after finish(): the harness's loop is torn down", at: location) }
        return !isFinished
    }
}
