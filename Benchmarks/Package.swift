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
        dependencies: [.product(name: "Benchmark", package: "benchmark")]
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
    ],
    targets: [
        // Pinning and the raw eventfd/epoll floor, independent of the library's own C shims.
        .target(name: "CBenchSupport", path: "Support/CBenchSupport"),
        // The loop beside the real CFRunLoop (CoreFoundation + Foundation from the toolchain).
        benchmarkTarget("LoopBenchmarks", libraries: ["RunLoopCore"], support: ["CBenchSupport"]),
        benchmarkTarget("AutoreleaseBenchmarks", libraries: ["Autorelease"]),
        benchmarkTarget("TransactionBenchmarks", libraries: ["Transactions"]),
    ],
    swiftLanguageModes: [.v6]
)
