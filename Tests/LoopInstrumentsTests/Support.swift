import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import RunLoopCore
@testable import LoopInstruments

/// Feeds hand-written loop events to a recorder, so exporter tests know the input exactly.
struct EventScript {
    let recorder: TraceRecorder
    let clock: ManualClock
    var pass: UInt64 = 1
    var mode: Loop.Mode = .default
    /// Event time; also moves the recorder's clock (as a loop and its recorder share one).
    var time: LoopInstant {
        get { clock.now }
        nonmutating set { clock.set(newValue) }
    }

    init(recorder: TraceRecorder, clock: ManualClock = ManualClock()) {
        self.recorder = recorder
        self.clock = clock
        recorder.use(clock: clock)
    }

    func activity(_ activity: Loop.Activity) {
        recorder.record(LoopEvent(kind: .activity(activity), label: "", mode: mode, pass: pass, time: time))
    }
    func begin(_ kind: LoopEvent.Callout, _ label: String) {
        recorder.record(LoopEvent(kind: .calloutBegin(kind), label: label, mode: mode, pass: pass, time: time))
    }
    func end(_ kind: LoopEvent.Callout, _ label: String) {
        recorder.record(LoopEvent(kind: .calloutEnd(kind), label: label, mode: mode, pass: pass, time: time))
    }
    func callout(_ kind: LoopEvent.Callout, _ label: String, body: () -> Void = {}) {
        begin(kind, label); body(); end(kind, label)
    }
    func recordSleep() { recorder.record(LoopEvent(kind: .sleep, label: "", mode: mode, pass: pass, time: time)) }
    func wake() { recorder.record(LoopEvent(kind: .wake, label: "", mode: mode, pass: pass, time: time)) }
    func runBegin() { recorder.record(LoopEvent(kind: .runBegin, label: "", mode: mode, pass: pass, time: time)) }
    func runEnd(_ result: Loop.RunResult) { recorder.record(LoopEvent(kind: .runEnd(result), label: "", mode: mode, pass: pass, time: time)) }
}

/// The instant `ms` milliseconds after the clock's origin.
func at(ms: UInt64) -> LoopInstant { LoopInstant(nanoseconds: ms * 1_000_000) }

/// The instant `ns` nanoseconds after the clock's origin.
func at(ns: UInt64) -> LoopInstant { LoopInstant(nanoseconds: ns) }

/// Counts the elements of an XML document (fails the parse on malformed input).
final class XMLElementCounter: NSObject, XMLParserDelegate {
    var counts: [String: Int] = [:]
    var texts: [String] = []
    private var inText = false
    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        counts[name, default: 0] += 1
        inText = name == "text"
        if inText { texts.append("") }
    }
    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if inText { texts[texts.count - 1] += string }
    }
    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "text" { inText = false }
    }

    /// Parses `svg`; nil when it is not well-formed.
    static func count(_ svg: String) -> XMLElementCounter? {
        let counter = XMLElementCounter()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = counter
        return parser.parse() ? counter : nil
    }
}

/// Whether kernel thread `tid` of this process has gone away. `pthread_join` returns once the
/// thread has exited, but the kernel may drop `/proc/self/task/<tid>` a moment later (it
/// signals nothing a thread could wait on), so this re-checks, yielding the CPU in between,
/// until a two-second deadline. A thread that was never joined (still running) stays listed
/// and the answer is false.
func threadIsGone(_ tid: Int64) -> Bool {
    let path = "/proc/self/task/\(tid)"
    let deadline = MonotonicClock.shared.now.advanced(by: .seconds(2))
    while MonotonicClock.shared.now < deadline {
        if !FileManager.default.fileExists(atPath: path) { return true }
        sched_yield()
    }
    return !FileManager.default.fileExists(atPath: path)
}
