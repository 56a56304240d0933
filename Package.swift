// swift-tools-version:6.1
import PackageDescription

// RunLoopKit: a CFRunLoop-faithful run loop, objc4's autorelease pool and Core Animation's
// transaction commit for Swift. The library targets have no package dependencies;
// `Benchmarks/` is a separate package.
let package = Package(
    name: "RunLoopKit",
    // What a user imports (Docs/Architecture.md, "Products"). Every other module is internal to
    // the package; its executables (CI tools) still run with `swift run <name>`.
    products: [
        // The umbrella: the three pillars, the instruments and the diagnostics hook.
        .library(name: "RunLoopKit", targets: ["RunLoopKit"]),
        // The public testing toolkit (links Swift Testing and XCTest: for test targets).
        .library(name: "RunLoopTesting", targets: ["RunLoopTesting"]),
        // The bridges to a real CFRunLoop (links Foundation).
        .library(name: "RunLoopKitFoundation", targets: ["RunLoopKitFoundation"]),
        // Opt-in: linking it replaces the process's malloc family (see Docs/Memory.md).
        .library(name: "LoopAllocationCounter", targets: ["LoopAllocationCounter"]),
        // The three pillars one by one, for a program that keeps its own loop (SwiftNIO, a
        // hand-written epoll loop) and takes only the pool or the commit pipeline.
        .library(name: "RunLoopCore", targets: ["RunLoopCore"]),
        .library(name: "Autorelease", targets: ["Autorelease"]),
        .library(name: "Transactions", targets: ["Transactions"]),
        // GLib and a Loop hosting each other; reaches GLib at run time (Docs/Hosting.md).
        .library(name: "RunLoopKitGLib", targets: ["RunLoopKitGLib"]),
        .executable(name: "runloopkit", targets: ["runloopkit"]),
    ],
    targets: [
        // Tiny C target: epoll/eventfd/timerfd and libdispatch's main-queue hooks.
        // Debug builds compile its fault injection (tests make chosen system calls fail); release
        // builds contain none of it.
        .target(name: "CRunLoopShims",
                cSettings: [.define("RLK_FAULT_INJECTION", .when(configuration: .debug))],
                linkerSettings: [.linkedLibrary("dispatch", .when(platforms: [.linux]))]),
        // One pthread mutex for every module (ThreadSanitizer sees it, unlike Synchronization.Mutex)
        // and one way to start a thread.
        .target(name: "PThreads", dependencies: ["CHeldMutexes"]),
        // Debug builds: the per-thread count of held PThreads mutexes, a C thread-local (Swift has
        // none); `Diagnostics.report` checks it is 0.
        .target(name: "CHeldMutexes"),
        // The autorelease pool's thread-locals (hot-page word, statistics state) in C.
        .target(name: "CPoolThreadWord"),
        // Typed time shared by the loop and the commit pipeline: `LoopInstant` and the nanosecond
        // arithmetic behind it.
        .target(name: "LoopTime"),
        // The one diagnostics hook every module reports through.
        .target(name: "RunLoopDiagnostics", dependencies: ["PThreads"]),
        // The three pillars; none imports another.
        .target(name: "RunLoopCore", dependencies: ["CRunLoopShims", "PThreads", "RunLoopDiagnostics", "LoopTime"]),
        .target(name: "Autorelease", dependencies: ["CPoolThreadWord", "PThreads", "RunLoopDiagnostics"]),
        .target(name: "Transactions", dependencies: ["PThreads", "RunLoopDiagnostics", "LoopTime"]),
        // Tracing, memory probe, lag monitor, exporters.
        .target(name: "LoopInstruments", dependencies: ["RunLoopCore", "Autorelease", "Transactions", "PThreads", "LoopTime"]),
        // Umbrella: re-exports and the standard observers. Links no Foundation.
        .target(name: "RunLoopKit", dependencies: ["RunLoopCore", "Autorelease", "Transactions", "LoopInstruments",
                                                   "RunLoopDiagnostics"]),
        // The bridges to a real CFRunLoop: the one module that links Foundation.
        .target(name: "RunLoopKitFoundation", dependencies: ["RunLoopKit"]),
        // The public testing toolkit: a harness on the virtual clock, ordering assertions, replay.
        .target(name: "RunLoopTesting", dependencies: ["RunLoopKit", "RunLoopCore", "PThreads"]),
        // The opt-in allocation counter: C interposers of the malloc family (per-thread counts,
        // a side table in generations mode) and the attribution to callouts and turns on top.
        // No library target depends on it.
        .target(name: "CAllocationCounter"),
        .target(name: "LoopAllocationCounter",
                dependencies: ["CAllocationCounter", "LoopInstruments", "RunLoopCore", "Autorelease", "Transactions", "PThreads"]),
        // The documented scenarios, shared by the main job and the DocumentedScenarios suite.
        .target(name: "LoopScenarios", dependencies: ["RunLoopKit", "PThreads", "LoopAllocationCounter"]),
        // A scenario run as a replay trace and back (runloopkit record / replay, CI's replay gate).
        .target(name: "ScenarioReplay", dependencies: ["LoopScenarios", "RunLoopTesting"]),
        .executableTarget(name: "runloopkit", dependencies: ["LoopScenarios", "RunLoopTesting", "ScenarioReplay"]),
        .executableTarget(name: "autorelease-stress", dependencies: ["Autorelease"]),
        // CI tools, not products (SwiftPM gives a root package's executable targets an implicit
        // product: `swift run runloopkit-soak 60` works here; a package depending on this one
        // sees neither). The soak: fd I/O, ports, timers and commits under load.
        .executableTarget(name: "runloopkit-soak", dependencies: ["RunLoopKit", "PThreads"]),
        // Producers sending to one LoopPortSource with the library's defaults (issue 13's soak);
        // the TCP echo service that used to sit beside it is the example Examples/EchoService.
        .executableTarget(name: "port-soak", dependencies: ["RunLoopKit", "PThreads"]),
        // GLib reached at run time: its types and functions declared here, resolved with
        // dlopen("libglib-2.0.so.0"), so building and testing need no GLib headers.
        .target(name: "CGLibRuntime", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // GLib hosts a Loop and a Loop hosts GLib (Docs/Hosting.md).
        .target(name: "RunLoopKitGLib", dependencies: ["CGLibRuntime", "RunLoopCore", "RunLoopDiagnostics", "LoopTime"]),
        // Runs GLib's main loop on the main thread, driving Loop.main; the "Loop.main under GLib"
        // suite runs it and checks the order.
        .executableTarget(name: "glib-main-probe", dependencies: ["RunLoopKitGLib", "CGLibRuntime", "RunLoopCore"]),
        // Runs Loop.main on the main thread with @MainActor code, DispatchQueue.main and timers;
        // the MainActorOnMainLoop suite runs it and checks the order.
        .executableTarget(name: "mainactor-probe", dependencies: ["RunLoopCore"]),
        // The lost-wake-up stress (issue 26): producers on other CPUs hand work to a sleeping
        // loop through every enqueue path; the test suite runs it briefly, the release tool
        // `wakeup-stress` runs it in CI.
        .target(name: "LoopStress", dependencies: ["RunLoopCore", "PThreads", "CRunLoopShims"]),
        .executableTarget(name: "wakeup-stress", dependencies: ["LoopStress"]),
        // Runs the probes and tools built beside a test bundle as child processes, with a
        // deadline (the tests that need a main thread or a resident set of their own).
        .target(name: "ChildProcesses"),

        // Each test target lists every module it imports (.ci/check-architecture checks it).
        .testTarget(name: "RunLoopDiagnosticsTests", dependencies: ["RunLoopDiagnostics"]),
        // mainactor-probe: built with the tests, run by the MainActorOnMainLoop suite.
        .testTarget(name: "RunLoopCoreTests", dependencies: ["RunLoopCore", "CRunLoopShims", "PThreads", "RunLoopDiagnostics", "mainactor-probe",
                                                             "LoopStress", "ChildProcesses"]),
        .testTarget(name: "DifferentialTests", dependencies: ["RunLoopCore", "RunLoopDiagnostics"]),
        .testTarget(name: "AutoreleaseTests", dependencies: ["Autorelease", "PThreads", "RunLoopDiagnostics"]),
        .testTarget(name: "TransactionsTests", dependencies: ["Transactions", "PThreads", "RunLoopDiagnostics"]),
        .testTarget(name: "LoopInstrumentsTests", dependencies: ["LoopInstruments", "RunLoopCore", "Autorelease", "Transactions", "PThreads"]),
        .testTarget(name: "RunLoopKitTests", dependencies: ["RunLoopKit", "RunLoopKitFoundation", "LoopScenarios"]),
        .testTarget(name: "LoopAllocationCounterTests",
                    dependencies: ["LoopAllocationCounter", "RunLoopCore", "Autorelease", "Transactions", "LoopInstruments", "RunLoopKit"]),
        // ReplayScripts/ links the differential suite's script files (one copy, two targets).
        .testTarget(name: "RunLoopTestingTests", dependencies: ["RunLoopTesting", "RunLoopCore", "LoopScenarios", "PThreads",
                                                                "ScenarioReplay", "RunLoopDiagnostics"]),
        // Runs the port-soak executable (built with the tests) as a process, as CI runs it.
        .testTarget(name: "PortSoakTests", dependencies: ["port-soak", "ChildProcesses"]),
        // DifferentialScripts/ links the differential suite's script files; glib-main-probe is
        // built with the tests.
        .testTarget(name: "RunLoopKitGLibTests", dependencies: ["RunLoopKitGLib", "CGLibRuntime", "RunLoopCore", "RunLoopDiagnostics", "LoopInstruments", "PThreads",
                                                                "glib-main-probe", "ChildProcesses", "LoopScenarios"]),
        .testTarget(name: "RepositoryChecksTests"),
    ],
    swiftLanguageModes: [.v6]
)
