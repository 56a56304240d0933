// swift-tools-version:6.1
import PackageDescription

// RunLoopKit's fuzz targets: a separate package so the library keeps no package dependencies
// and so only these targets are built with libFuzzer. Build and run with `.ci/fuzz` (it passes
// `--sanitize=fuzzer -Xswiftc -parse-as-library`; libFuzzer provides `main`). See Docs/Hardening.md.

/// The root package's identity is the name of the directory it was cloned into.
let rootPackage = Context.packageDirectory
    .split(separator: "/")
    .dropLast()
    .last
    .map { String($0).lowercased() } ?? "runloopkit"

let package = Package(
    name: "RunLoopKitFuzz",
    dependencies: [.package(path: "../")],
    targets: [
        // Random operation scripts on the virtual clock; checks nothing is lost, pools balance,
        // transactions close and teardown removes every item.
        .executableTarget(name: "fuzz-loop-script",
                          dependencies: [.product(name: "RunLoopKit", package: rootPackage)]),
        // The trace files the library writes (Chrome trace JSON) from arbitrary labels and logs.
        .executableTarget(name: "fuzz-trace-export",
                          dependencies: [.product(name: "RunLoopKit", package: rootPackage)]),
        // The replay trace format (RunLoopTesting), the file format the library reads: parse,
        // and a write/read round trip that changes nothing; refusals name a line.
        .executableTarget(name: "fuzz-replay-trace",
                          dependencies: [.product(name: "RunLoopTesting", package: rootPackage)]),
    ],
    swiftLanguageModes: [.v6]
)
