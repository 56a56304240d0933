import RunLoopKit

extension LoopTestHarness {
    /// What a turn of `mode` would do now, one line each; empty when the mode is idle. Marks
    /// waiting for a commit count too.
    func dueNow(in mode: Loop.Mode) -> [String] {
        var due = DueWork.list(on: loop, clock: clock, in: mode)
        if pipeline.needsCommit {
            due.append("\(pipeline.pendingLayerCount) marked layer(s) wait for a commit")
        }
        return due
    }

    /// What `source`'s descriptor is ready for now (see `DueWork.readiness(of:)`).
    func readiness(of source: LoopFileSource) -> LoopFileSource.Events { DueWork.readiness(of: source) }
}
