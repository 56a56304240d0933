// swift-tools-version:6.1
import PackageDescription

// An example service on RunLoopKit: a TCP echo server on a Loop (half-close, lingering close,
// back-pressure, idle timers, deferred cleanup, graceful shutdown), its tests, and a
// hostile-client suite written apart from it. A package of its own, as a user would write one:
// it depends on RunLoopKit by path and uses only RunLoopKit's products. See Docs/Services.md.
//
//   swift run runloopkit-echo --help
//   swift test
//   swift run -c release echo-hostile -- .build/release/runloopkit-echo

/// A path dependency's identity is the name of the folder it was cloned into (lowercased), so
/// it is derived here instead of being spelled out.
let rootPackage = Context.packageDirectory
    .split(separator: "/")
    .dropLast(2)
    .last
    .map { String($0).lowercased() } ?? "runloopkit"

let package = Package(
    name: "EchoService",
    dependencies: [.package(path: "../..")],
    targets: [
        // accept4, pipe2, TCP_NODELAY and the thread calls Glibc's Swift overlay leaves out.
        .target(name: "CEchoShims"),
        // The service: EchoServer, its configuration and statistics, ShutdownSignals.
        .target(name: "EchoService", dependencies: [.product(name: "RunLoopKit", package: rootPackage), "CEchoShims"]),
        // The service on the main thread's loop, stopped by SIGTERM/SIGINT.
        .executableTarget(name: "runloopkit-echo", dependencies: ["EchoService", .product(name: "RunLoopKit", package: rootPackage)]),
        // The hostile-client suite: plain C, written apart from the service; it starts a server
        // command (this package's runloopkit-echo, or any echo server that prints
        // "listening on 127.0.0.1:PORT") and attacks it over loopback.
        .executableTarget(name: "echo-hostile"),
        // Built with the tests: the executables the tests run as processes.
        .testTarget(name: "EchoServiceTests", dependencies: ["EchoService", "CEchoShims", "runloopkit-echo", "echo-hostile",
                                                            .product(name: "RunLoopKit", package: rootPackage)]),
    ],
    swiftLanguageModes: [.v6]
)
