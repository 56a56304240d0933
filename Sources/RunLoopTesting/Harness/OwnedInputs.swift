import RunLoopKit

/// The sources, ports and pipes the harness made for the test: its own to clean up, so they are
/// never reported as left behind; what they still hold (a signal, messages, a ready pipe) is.
struct OwnedInputs {
    var sources: [LoopSource] = []
    var ports: [LoopPortSource] = []
    var pipes: [LoopTestPipe] = []
    var observers: [LoopObserver] = []
    var timers: [LoopTimer] = []
    /// Keeps the common modes from running empty, as a main loop's never do (R4a).
    var keepAlive: LoopSource?

    func owns(_ source: LoopSource) -> Bool { sources.contains { $0 === source } || keepAlive === source }
    func owns(_ port: LoopPortSource) -> Bool { ports.contains { $0 === port } }
    func owns(_ file: LoopFileSource) -> Bool { pipes.contains { $0.source === file } }
    func owns(_ observer: LoopObserver) -> Bool { observers.contains { $0 === observer } }
    func owns(_ timer: LoopTimer) -> Bool { timers.contains { $0 === timer } }

    /// Invalidates everything and closes the pipes.
    mutating func closeAll() {
        for source in sources { source.invalidate() }
        for port in ports { port.invalidate() }
        for pipe in pipes { pipe.close() }
        for observer in observers { observer.invalidate() }
        for timer in timers { timer.invalidate() }
        keepAlive?.invalidate()
        self = OwnedInputs()
    }
}
