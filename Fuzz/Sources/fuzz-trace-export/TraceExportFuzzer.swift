// libFuzzer entry: the trace files the library writes. Each input becomes callout labels, log
// lines, marks and mode names (arbitrary text: quotes, backslashes, control characters,
// invalid UTF-8 turned into U+FFFD) on a loop on the virtual clock; the recorded trace is
// exported as Chrome trace JSON and as the text log. The JSON must parse (Foundation's
// parser, outside the library), keep every B/E slice balanced per thread, and carry every label
// back unchanged; the text log must hold one line per entry and every log line's text.
//
// The replay trace format, which the library reads, has its own target: fuzz-replay-trace.
import Foundation
import RunLoopKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTraceExport(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let texts = UnsafeBufferPointer(start: data, count: min(size, 2048))
        .split(separator: 0, omittingEmptySubsequences: false)
        .prefix(16)
        .map { String(decoding: $0, as: UTF8.self) }
    checkExports(of: texts)
    return 0
}

func violated(_ what: String) -> Never {
    fatalError("invariant violated: \(what)")
}

func checkExports(of texts: [String]) {
    let clock = VirtualClock()
    let loop = Loop(clock: clock)
    let recorder = TraceRecorder(clock: clock)
    recorder.attach(to: loop)
    recorder.observeActivities(on: loop)
    let mode = Loop.Mode(texts.first ?? "")
    loop.addCommonMode(mode)
    var sources: [LoopSource] = []
    for (index, text) in texts.enumerated() {
        let source = LoopSource(label: text) { recorder.log(text) }
        sources.append(source)
        loop.add(source, mode: index % 2 == 0 ? mode : .default)
        source.signal()
        recorder.mark(text)
    }
    loop.run(mode: mode, timeout: .milliseconds(1))
    loop.run(mode: .default, timeout: .zero)
    loop.tearDown()

    let entries = recorder.entries
    let json = ChromeTraceExporter.json(entries, processName: texts.last ?? "")
    guard let document = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
          let events = document["traceEvents"] as? [[String: Any]] else {
        violated("the Chrome trace is not JSON with a traceEvents array:\n\(json)")
    }
    var depth: [Int: Int] = [:]
    var names: Set<String> = []
    for event in events {
        if let name = event["name"] as? String { names.insert(name) }
        if let args = event["args"] as? [String: Any] {
            for case let value as String in args.values { names.insert(value) }
        }
        let thread = event["tid"] as? Int ?? -1
        switch event["ph"] as? String {
        case "B": depth[thread, default: 0] += 1
        case "E":
            depth[thread, default: 0] -= 1
            if depth[thread, default: 0] < 0 { violated("an E event without its B on thread \(thread)") }
        default: break
        }
    }
    if let open = depth.first(where: { $0.value != 0 }) { violated("\(open.value) slices left open on thread \(open.key)") }
    for text in texts where !names.contains(text) {
        violated("label \(text.debugDescription) did not come back from the JSON")
    }
    if let processName = texts.last, !names.contains(processName) {
        violated("process name \(processName.debugDescription) did not come back from the JSON")
    }

    let log = TextLogExporter.verboseLines(entries)
    for text in texts where !text.isEmpty && !log.contains(where: { $0.contains(text) }) {   // Foundation: "".contains is false
        violated("log line \(text.debugDescription) is missing from the text log")
    }
}
