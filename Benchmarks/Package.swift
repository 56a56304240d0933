// swift-tools-version:6.1
import PackageDescription

// RunLoopKit's benchmarks: a separate package so the library keeps no package dependencies.
// Run: `swift package benchmark --format markdown` in this directory (see Docs/Benchmarks.md).
//
// Only the "MallocInterposer" trait of ordo-one/benchmark: its default "RuntimeInterposer"
// trait pulls a package this machine's mirror does not have.

/// The root package's identity is the name of the directory it was cloned into, so it is
/// derived here instead of being spelled out.
let rootPackage = Context.packageDirectory
    .split(separator: "/")
    .dropLast()
    .last
    .map { String($0).lowercased() } ?? "runloopkit"

/// package-benchmark only runs executable targets whose folder sits in a folder named
/// `Benchmarks`, hence `Benchmarks/Benchmarks/<Target>`.
func benchmarkTarget(_ name: String, libraries: [String], support: [Target.Dependency] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: [.product(name: "Benchmark", package: "benchmark"), "BenchOrder"]
            + libraries.map { .product(name: $0, package: rootPackage) } + support,
        path: "Benchmarks/\(name)",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

let package = Package(
    name: "RunLoopKitBenchmarks",
    dependencies: [
        .package(path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
        // A peer measured beside the loop: SwiftNIO's epoll event loop.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // Pinning and the raw eventfd/epoll floor, independent of the library's own C shims.
        .target(name: "CBenchSupport", path: "Support/CBenchSupport"),
        // Ours first or peers first in each work (RUNLOOPKIT_BENCH_ORDER), for run-all.sh's rounds.
        .target(
            name: "BenchOrder",
            dependencies: [.product(name: "Benchmark", package: "benchmark")],
            path: "Support/BenchOrder"
        ),
        // The polling pass and the round trip (floor and loop) as the benchmarks and tools run
        // them, and the tools' table cells.
        .target(
            name: "BenchPasses",
            dependencies: [.product(name: "RunLoopCore", package: rootPackage), "CLibuvPeer", "CGLibPeer", "CBenchSupport"],
            path: "Support/BenchPasses"
        ),
        // C peers, each a handful of functions that run N iterations of one piece of work and
        // return, so the measured loops are plain C like the peers' own users write.
        // Debian packages: libuv1-dev, libglib2.0-dev, libgnustep-base-dev (Scripts/install-peers.sh).
        .target(
            name: "CLibuvPeer",
            dependencies: ["CBenchSupport"],
            path: "Support/CLibuvPeer",
            linkerSettings: [.linkedLibrary("uv")]
        ),
        .target(
            name: "CGLibPeer",
            dependencies: ["CBenchSupport"],
            path: "Support/CGLibPeer",
            // pkg-config --cflags glib-2.0 on Debian (both multiarch spellings of glibconfig.h's folder).
            cSettings: [.unsafeFlags([
                "-I/usr/include/glib-2.0",
                "-I/usr/lib/x86_64-linux-gnu/glib-2.0/include",
                "-I/usr/lib/aarch64-linux-gnu/glib-2.0/include",
            ])],
            linkerSettings: [.linkedLibrary("glib-2.0")]
        ),
        // GNUstep base is opened with dlopen and driven through the GNU Objective-C runtime's C
        // API (objc_msg_lookup is what gcc emits for a message send), so no Objective-C compiler
        // and no link-time dependency: without GNUstep only its benchmarks report an error.
        .target(
            name: "CGNUstepPeer",
            path: "Support/CGNUstepPeer",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // The executors an actor hops onto (a loop, a SwiftNIO event loop, a serial
        // DispatchQueue) and SwiftNIO's pinned loop thread, shared by LoopBenchmarks and the
        // executor-pairs tool.
        .target(
            name: "ExecutorPeers",
            dependencies: [
                "BenchPasses", "CBenchSupport",
                .product(name: "RunLoopCore", package: rootPackage),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Support/ExecutorPeers"
        ),
        // The loop beside CFRunLoop and Foundation's RunLoop (from the toolchain), libuv, GLib
        // and SwiftNIO.
        benchmarkTarget(
            "LoopBenchmarks",
            libraries: ["RunLoopCore"],
            support: [
                "CBenchSupport", "CLibuvPeer", "CGLibPeer", "BenchPasses", "CFPasses", "ExecutorPeers",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The echo servers compared by Scripts/run-echo.sh and their load generators (the
        // loop's own server is runloopkit-echo of the example package Examples/EchoService):
        // echo-load for request/response, echo-many for many idle connections and for churn
        // (Scripts/run-many-connections.sh, Scripts/run-churn.sh).
        .executableTarget(name: "echo-load", path: "Echo/EchoLoad"),
        .executableTarget(name: "echo-many", path: "Echo/EchoMany"),
        .executableTarget(name: "uv-echo", path: "Echo/UVEcho", linkerSettings: [.linkedLibrary("uv")]),
        .executableTarget(
            name: "nio-echo",
            dependencies: [.product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")],
            path: "Echo/NIOEcho"
        ),
        // A loop beside a busy loop on the other CPU, timed in pairs; Scripts/run-loop-scaling.sh.
        .executableTarget(
            name: "loop-scaling",
            dependencies: ["BenchPasses", "CBenchSupport"],
            path: "Tools/LoopScaling"
        ),
        // The cross-thread round trip against its eventfd floor, timed in pairs of chunks;
        // Scripts/run-round-trip-pairs.sh.
        .executableTarget(
            name: "round-trip-pairs",
            dependencies: ["BenchPasses", "CBenchSupport"],
            path: "Tools/RoundTripPairs"
        ),
        // Executor hops onto a loop against hops onto a SwiftNIO event loop, timed in pairs of
        // chunks; Scripts/run-executor-pairs.sh.
        .executableTarget(
            name: "executor-pairs",
            dependencies: ["BenchPasses", "ExecutorPeers"],
            path: "Tools/ExecutorPairs"
        ),
        // The polling pass on Loop.main, which package-benchmark cannot reach (its benchmarks
        // never run on the main thread); Scripts/run-main-loop.sh.
        .executableTarget(
            name: "main-loop-pass",
            dependencies: [.product(name: "RunLoopCore", package: rootPackage), "CLibuvPeer", "BenchPasses"],
            path: "MainLoop/MainLoopPass"
        ),
        // The allocation counter's overhead timed in pairs of chunks a few milliseconds apart
        // in one process, the counter switched at run time; Scripts/run-allocation-overhead.sh.
        .executableTarget(
            name: "allocation-overhead",
            dependencies: ["LoopAllocationCounter", "RunLoopCore", "Autorelease"].map { .product(name: $0, package: rootPackage) }
                + ["BenchPasses"],
            path: "Tools/AllocationOverhead"
        ),
        // GLib's main loop on the main thread hosting Loop.main (RunLoopKitGLib), with the
        // swift-cross-ui run loop tickler and with g_main_context_invoke (issue 30): hop latency,
        // idle wake-ups, and a hosted polling pass beside GLib's idle source and the native pass;
        // Docs/Hosting.md.
        .target(
            name: "CGLibHostingPeer",
            path: "Support/CGLibHostingPeer",
            cSettings: [.unsafeFlags([
                "-I/usr/include/glib-2.0",
                "-I/usr/lib/x86_64-linux-gnu/glib-2.0/include",
                "-I/usr/lib/aarch64-linux-gnu/glib-2.0/include",
            ])],
            linkerSettings: [.linkedLibrary("glib-2.0")]
        ),
        .executableTarget(
            name: "glib-hosting",
            dependencies: ["BenchPasses", "CBenchSupport", "CGLibHostingPeer", "CGLibPeer"]
                + ["RunLoopCore", "RunLoopKitGLib"].map { .product(name: $0, package: rootPackage) },
            path: "Tools/GLibHosting"
        ),
        // The fresh-object works against the naive pool, timed in pairs of chunks in both
        // orders; Scripts/run-pool-pairs.sh.
        .executableTarget(
            name: "pool-pairs",
            dependencies: [.product(name: "Autorelease", package: rootPackage), "BenchPasses", "CBenchSupport"],
            path: "Tools/PoolPairs"
        ),
        // The polling pass and its hooks on CFRunLoop, for the benchmarks and pass-pairs.
        .target(name: "CFPasses", dependencies: ["BenchPasses"], path: "Support/CFPasses"),
        // The polling pass against CFRunLoop and beside idle items, timed in pairs of chunks in
        // both orders; Scripts/run-pass-pairs.sh.
        .executableTarget(
            name: "pass-pairs",
            dependencies: ["BenchPasses", "CBenchSupport", "CFPasses"],
            path: "Tools/PassPairs"
        ),
        // The due timer re-armed by the caller against libuv, timed in pairs of chunks in both
        // orders; Scripts/run-due-timer-pairs.sh.
        .executableTarget(
            name: "due-timer-pairs",
            dependencies: ["BenchPasses", "CBenchSupport"],
            path: "Tools/DueTimerPairs"
        ),
        benchmarkTarget("AutoreleaseBenchmarks", libraries: ["Autorelease"], support: ["CGNUstepPeer"]),
        benchmarkTarget("TransactionBenchmarks", libraries: ["Transactions"]),
    ],
    swiftLanguageModes: [.v6]
)
