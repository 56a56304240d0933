import RunLoopKit

/// A port for a scenario's own plumbing. A scenario is a fixed demonstration with no caller to
/// hand a refusal to: a process out of descriptors cannot run it, so it stops naming the failure.
func scenarioPort(label: String, handler: sending @escaping (LoopPortSource.Message) -> Void) -> LoopPortSource {
    do {
        return try LoopPortSource(label: label, handler: handler)
    } catch {
        preconditionFailure("scenario cannot create its port '\(label)': \(error)")
    }
}
