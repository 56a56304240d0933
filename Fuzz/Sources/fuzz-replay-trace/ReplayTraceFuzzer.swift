// libFuzzer entry: the replay trace format, the one file format the library reads. Any input
// either parses, and then writes back to text that parses to the same trace and writes the same
// text again; or is refused with a `ReplayTraceError` that names a line of the input and says
// what is wrong. Nothing traps, nothing hangs.
import RunLoopTesting

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReplayTrace(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    checkRoundTrip(of: text)
    return 0
}

func violated(_ what: String) -> Never {
    fatalError("invariant violated: \(what)")
}

func checkRoundTrip(of text: String) {
    let trace: ReplayTrace
    do {
        trace = try ReplayTrace(parsing: text)
    } catch {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        if error.line < 1 || error.line > lines + 1 { violated("error names line \(error.line) of \(lines): \(error)") }
        if error.message.isEmpty { violated("an error without a message at line \(error.line)") }
        return
    }
    let written = trace.text
    let reread: ReplayTrace
    do {
        reread = try ReplayTrace(parsing: written)
    } catch {
        violated("the written form of a parsed trace does not parse: \(error)")
    }
    if reread != trace { violated("a parsed trace changed on a write/read round trip") }
    if reread.text != written { violated("writing a trace twice gave two texts") }
}
