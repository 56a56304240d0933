// swift-tools-version:6.1
// The comparison of Docs/Testing.md's "Proof, side by side": the twelve async shapes of
// Tests/RunLoopTestingTests/VirtualLoop/AsyncShapes.swift (a symbolic link here) on RunLoopKit's
// withVirtualLoop, and the same shapes on pointfreeco's TestClock, with and without
// withMainSerialExecutor. Outside the library: the library has no package dependencies.
import Foundation
import PackageDescription

// The repository's root package, by path; its identity is its directory's name.
let root = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "AsyncTestClocks",
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/pointfreeco/swift-clocks", exact: "1.1.1"),
        .package(url: "https://github.com/pointfreeco/swift-concurrency-extras", exact: "1.4.3"),
    ],
    targets: [
        .executableTarget(
            name: "async-test-clocks",
            dependencies: [
                .product(name: "RunLoopTesting", package: root.lastPathComponent),
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "ConcurrencyExtras", package: "swift-concurrency-extras"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
