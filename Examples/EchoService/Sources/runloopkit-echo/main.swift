// runloopkit-echo: the TCP echo service of the EchoService example on the main thread's loop.
//
//   swift run runloopkit-echo [options]        (--help lists them)
//
// Prints "listening on 127.0.0.1:PORT", serves until SIGTERM or SIGINT, then stops accepting,
// sends what it holds, closes every connection with a lingering close, prints the counters and
// exits 0. A second signal forces the shutdown (connections still open are reset).
import EchoService
import RunLoopKit
#if canImport(Glibc)
import Glibc
#endif

let usage = """
    usage: runloopkit-echo [options]

    A TCP echo service on 127.0.0.1, run on the main thread's RunLoopKit loop. It prints
    "listening on 127.0.0.1:PORT", serves until SIGTERM or SIGINT, then stops accepting, sends
    what it holds, closes each connection with a lingering close, prints its counters and exits 0.
    A second signal forces the shutdown.

    options (defaults in brackets):
      --port N               TCP port, 0 for any free one [0]
      --lines                echo complete lines only (64 KiB at most per line) [every byte]
      --idle-timeout S       close a connection silent for S seconds; 0: never [60]
      --high-water BYTES     unsent bytes at which a connection stops reading [262144]
      --low-water BYTES      unsent bytes at which it reads again [65536]
      --no-half-close        close at once when the peer finishes sending, dropping replies
                             still unsent [keep the connection until every reply is out]
      --linger-time MS       longest lingering close (read and discard) [30000]
      --linger-timeout MS    lingering close ends after this long without input [5000]
      --shutdown-grace MS    how long a shutdown lets connections send what they hold [5000]
      --socket-buffer BYTES  fixed SO_RCVBUF/SO_SNDBUF for every connection [kernel's autotuning]
      --help                 print this and exit
    """

func fail(_ message: String) -> Never {
    StandardErrorLine.write("runloopkit-echo: \(message) (--help lists the options)")
    exit(2)
}

/// Writes a line to standard output at once (no stdio buffer: a parent reads the port from it).
func printNow(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { raw in write(1, raw.baseAddress, raw.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }   // stdout gone: nobody to tell
        offset += written
    }
}

func parse(_ arguments: [String]) -> EchoConfiguration {
    var configuration = EchoConfiguration()
    var rest = arguments[...]
    func number(after flag: String) -> Int {
        guard let text = rest.popFirst(), let value = Int(text), value >= 0 else { fail("\(flag) needs a whole number") }
        return value
    }
    func milliseconds(after flag: String) -> Duration {
        let value = number(after: flag)
        guard value > 0 else { fail("\(flag) needs a positive number of milliseconds") }
        return .milliseconds(value)
    }
    while let argument = rest.popFirst() {
        switch argument {
        case "--help", "-h":
            printNow(usage)
            exit(0)
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
        case "--no-half-close": configuration.allowHalfClosure = false
        case "--linger-time": configuration.lingerTime = milliseconds(after: argument)
        case "--linger-timeout": configuration.lingerTimeout = milliseconds(after: argument)
        case "--shutdown-grace": configuration.shutdownGrace = .milliseconds(number(after: argument))
        case "--socket-buffer": configuration.socketBufferSize = number(after: argument)
        default: fail("unknown argument \(argument)")
        }
    }
    if let problem = configuration.problem { fail(problem) }
    return configuration
}

let configuration = parse(Array(CommandLine.arguments.dropFirst()))
let loop = Loop.current
let pools = LoopAutoreleasePools(installedOn: loop, modes: [configuration.mode])
let server: EchoServer
let signals: ShutdownSignals
do {
    server = try EchoServer(configuration: configuration, loop: loop)
    // The first signal shuts down gracefully, a second one forces it (EchoServer.beginShutdown).
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
