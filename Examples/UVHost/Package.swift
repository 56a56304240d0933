// swift-tools-version:6.1
import PackageDescription

// libuv hosts a Loop through the core's hosted run (Docs/Hosting.md): a uv_poll_t on the run's
// descriptor, a uv_timer_t for its deadline, a uv_prepare_t / uv_check_t pair around libuv's
// poll. Needs Debian's libuv1-dev (Benchmarks/Scripts/install-peers.sh installs it); CI runs
// `swift test --package-path Examples/UVHost`.

/// The root package's identity is the name of the directory it was cloned into.
let rootPackage = Context.packageDirectory
    .split(separator: "/")
    .dropLast(2)
    .last
    .map { String($0).lowercased() } ?? "runloopkit"

let package = Package(
    name: "UVHost",
    dependencies: [.package(path: "../..")],
    targets: [
        // libuv's handles and callbacks, in C: they call back into the Swift side through a
        // table of function pointers.
        .target(name: "CUVHost", path: "Sources/CUVHost", linkerSettings: [.linkedLibrary("uv")]),
        .target(name: "UVHost", dependencies: ["CUVHost", .product(name: "RunLoopCore", package: rootPackage)],
                path: "Sources/UVHost"),
        .executableTarget(name: "uv-host", dependencies: ["UVHost", .product(name: "RunLoopCore", package: rootPackage)],
                          path: "Sources/uv-host"),
        .testTarget(name: "UVHostTests", dependencies: ["UVHost", "CUVHost", .product(name: "RunLoopCore", package: rootPackage)],
                    path: "Tests/UVHostTests"),
    ],
    swiftLanguageModes: [.v6]
)
