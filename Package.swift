// swift-tools-version:6.1
import PackageDescription

// RunLoopKit: a CFRunLoop-faithful run loop, objc4's autorelease pool and Core Animation's
// transaction commit for Swift. The library targets have no package dependencies;
// `Benchmarks/` is a separate package.
let package = Package(
    name: "RunLoopKit",
    products: [
        .library(name: "RunLoopKit", targets: ["RunLoopKit"]),
        .library(name: "RunLoopKitFoundation", targets: ["RunLoopKitFoundation"]),
        .library(name: "RunLoopDiagnostics", targets: ["RunLoopDiagnostics"]),
        .library(name: "RunLoopCore", targets: ["RunLoopCore"]),
        .library(name: "Autorelease", targets: ["Autorelease"]),
        .library(name: "Transactions", targets: ["Transactions"]),
        .library(name: "LoopInstruments", targets: ["LoopInstruments"]),
        .library(name: "RunLoopTesting", targets: ["RunLoopTesting"]),
        .executable(name: "runloopkit", targets: ["runloopkit"]),
        .executable(name: "autorelease-stress", targets: ["autorelease-stress"]),
    ],
    targets: [
        // Tiny C target: epoll/eventfd/timerfd and libdispatch's main-queue hooks.
        .target(name: "CRunLoopShims", linkerSettings: [.linkedLibrary("dispatch", .when(platforms: [.linux]))]),
        // One pthread mutex for every module (ThreadSanitizer sees it, unlike Synchronization.Mutex)
        // and one way to start a thread.
        .target(name: "PThreads"),
        // The autorelease pool's thread-locals (hot-page word, statistics state) in C.
        .target(name: "CPoolThreadWord"),
        // The one diagnostics hook every module reports through.
        .target(name: "RunLoopDiagnostics", dependencies: ["PThreads"]),
        // The three pillars; none imports another.
        .target(name: "RunLoopCore", dependencies: ["CRunLoopShims", "PThreads", "RunLoopDiagnostics"]),
        .target(name: "Autorelease", dependencies: ["CPoolThreadWord", "PThreads", "RunLoopDiagnostics"]),
        .target(name: "Transactions", dependencies: ["PThreads", "RunLoopDiagnostics"]),
        // Tracing, memory probe, lag monitor, exporters.
        .target(name: "LoopInstruments", dependencies: ["RunLoopCore", "Autorelease", "Transactions", "PThreads"]),
        // Umbrella: re-exports and the standard observers. Links no Foundation.
        .target(name: "RunLoopKit", dependencies: ["RunLoopCore", "Autorelease", "Transactions", "LoopInstruments"]),
        // The bridges to a real CFRunLoop: the one module that links Foundation.
        .target(name: "RunLoopKitFoundation", dependencies: ["RunLoopKit"]),
        // The public testing toolkit: a harness on the virtual clock, ordering assertions, replay.
        .target(name: "RunLoopTesting", dependencies: ["RunLoopKit"]),
        // The documented scenarios, shared by the main job and the DocumentedScenarios suite.
        .target(name: "LoopScenarios", dependencies: ["RunLoopKit", "PThreads"]),
        .executableTarget(name: "runloopkit", dependencies: ["LoopScenarios"]),
        .executableTarget(name: "autorelease-stress", dependencies: ["Autorelease"]),
        // Runs Loop.main on the main thread with @MainActor code, DispatchQueue.main and timers;
        // the MainActorOnMainLoop suite runs it and checks the order.
        .executableTarget(name: "mainactor-probe", dependencies: ["RunLoopCore"]),

        // Each test target lists every module it imports (.ci/check-architecture checks it).
        .testTarget(name: "RunLoopDiagnosticsTests", dependencies: ["RunLoopDiagnostics"]),
        // mainactor-probe: built with the tests, run by the MainActorOnMainLoop suite.
        .testTarget(name: "RunLoopCoreTests", dependencies: ["RunLoopCore", "CRunLoopShims", "PThreads", "RunLoopDiagnostics", "mainactor-probe"]),
        .testTarget(name: "DifferentialTests", dependencies: ["RunLoopCore"]),
        .testTarget(name: "AutoreleaseTests", dependencies: ["Autorelease", "PThreads", "RunLoopDiagnostics"]),
        .testTarget(name: "TransactionsTests", dependencies: ["Transactions", "PThreads", "RunLoopDiagnostics"]),
        .testTarget(name: "LoopInstrumentsTests", dependencies: ["LoopInstruments", "RunLoopCore", "Autorelease", "Transactions", "PThreads"]),
        .testTarget(name: "RunLoopKitTests", dependencies: ["RunLoopKit", "RunLoopKitFoundation", "LoopScenarios"]),
        .testTarget(name: "RunLoopTestingTests", dependencies: ["RunLoopTesting"]),
        .testTarget(name: "RepositoryChecksTests"),
    ],
    swiftLanguageModes: [.v6]
)
