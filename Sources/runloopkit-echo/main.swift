// runloopkit-echo: the TCP echo service of LoopServices on the main thread's loop.
//
//   swift run runloopkit-echo [--port N] [--lines] [--idle-timeout SECONDS] [--high-water BYTES] [--low-water BYTES]
//
// Prints "listening on 127.0.0.1:PORT", serves until SIGTERM or SIGINT, then stops accepting,
// drains, closes, prints the counters and exits 0.
import LoopServices
import RunLoopDiagnostics
import RunLoopKit
#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String) -> Never {
    StandardErrorLine.write("runloopkit-echo: \(message)")
    exit(2)
}

/// Writes a line to standard output at once (no stdio buffer: a parent reads the port from it).
func printNow(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { raw in valueOrErrno("write") { write(1, raw.baseAddress, raw.count) } }
        guard case .success(let count) = written else { return }   // stdout gone: nobody to tell
        offset += count
    }
}

func parse(_ arguments: [String]) -> EchoConfiguration {
    var configuration = EchoConfiguration()
    var rest = arguments[...]
    func number(after flag: String) -> Int {
        guard let text = rest.popFirst(), let value = Int(text), value >= 0 else { fail("\(flag) needs a whole number") }
        return value
    }
    while let argument = rest.popFirst() {
        switch argument {
        case "--port":
            let port = number(after: argument)
            guard port <= 65535 else { fail("--port takes 0–65535") }
            configuration.port = UInt16(port)
        case "--lines": configuration.framing = .lines(maximumLength: 64 * 1024)
        case "--idle-timeout":
            let seconds = number(after: argument)
            configuration.idleTimeout = seconds > 0 ? .seconds(seconds) : nil
        case "--high-water": configuration.highWaterMark = number(after: argument)
        case "--low-water": configuration.lowWaterMark = number(after: argument)
        default: fail("unknown argument \(argument)")
        }
    }
    return configuration
}

let configuration = parse(Array(CommandLine.arguments.dropFirst()))
let loop = Loop.current
let pools = LoopAutoreleasePools(installedOn: loop, modes: [configuration.mode])
let server: EchoServer
let signals: ShutdownSignals
do {
    server = try EchoServer(configuration: configuration, loop: loop)
    signals = try ShutdownSignals(loop: loop, mode: configuration.mode) { _ in server.beginShutdown() }
} catch {
    fail("\(error)")
}
server.onFinished = { loop.stop() }
printNow("listening on 127.0.0.1:\(server.port)")
while !server.isFinished {
    loop.run(mode: configuration.mode, timeout: .seconds(3600))
}
signals.uninstall()
pools.uninstall()
printNow("stopped: \(server.counters.snapshot)")
