import Synchronization

/// Inputs (signals, sends, wake-ups) are reported only while some loop in the process has an
/// event sink, so without one each input pays one relaxed load and a branch.
enum InputReporting {
    /// Loops whose sink is set (`updateInstrumentation` counts; tear-down and deinit clear it).
    static let loopsWithSink = Atomic<Int>(0)

    @inline(__always)
    static var isActive: Bool { loopsWithSink.load(ordering: .relaxed) != 0 }
}

extension Loop {
    /// Reports `input` to this loop's sink on the calling thread, before the input takes effect.
    @inline(never)
    func reportInput(_ input: LoopEvent.Input, label: String) {
        guard let sink = instrumentation.withLock({ $0.sink }) else { return }
        let event = LoopEvent(kind: .input(input, fromOwnerThread: isOwnerThread), label: label,
                              mode: currentMode ?? .default, pass: passCount, time: clock.now)
        sink.loop(self, emitted: event)
    }
}

extension ItemCore {
    /// The loops holding the item now.
    var loops: [Loop] { lock.withLock { loopsLocked } }
}

extension LoopPortSource {
    /// Reports a send to the port's loop (slow path of `send`).
    @inline(never)
    func reportSend(_ message: Message) {
        guard let loop = core.loops.first else { return }
        if case .bytes(let bytes) = message { loop.reportInput(.send(bytes: bytes), label: label) } else {
            loop.reportInput(.send(bytes: nil), label: label)
        }
    }
}
