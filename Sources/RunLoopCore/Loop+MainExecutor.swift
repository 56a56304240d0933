@_spi(ExperimentalCustomExecutors) import _Concurrency
import CRunLoopShims

// The main actor on the main loop without Dispatch, through Swift 6.3's custom-executor SPI
// (SE "Custom Main and Global Executors"). Everything here is `@_spi(ExperimentalCustomExecutors)`
// in the standard library and may change or go away in a later toolchain; so is this file's API.

/// A loop can be a Swift `RunLoopExecutor` (`run()` is CFRunLoopRun, R6; `stop()` stops the
/// innermost run, W1) and ``Loop/main`` the process's `MainExecutor`. SPI: see
/// ``MainLoopExecutorFactory``.
@_spi(ExperimentalCustomExecutors)
extension Loop: MainExecutor {}

/// An `ExecutorFactory` whose main executor is ``Loop/main``: `@MainActor` jobs become jobs of
/// the main loop (block-queue callouts in ``Loop/jobModes``, B3) instead of `DispatchQueue.main`
/// work. Other tasks keep the platform's default executor.
///
/// **SPI, may change:** Swift 6.3 offers custom main executors only as
/// `@_spi(ExperimentalCustomExecutors)`. The 6.3.1 compiler does not yet pick up a top-level
/// `typealias DefaultExecutorFactory`, so install the factory explicitly, first thing in
/// `main.swift`, before any task or `@MainActor` hop (``Loop/installMainLoopAsMainExecutor()``).
///
/// ```swift
/// @_spi(ExperimentalCustomExecutors) import RunLoopCore
///
/// Loop.installMainLoopAsMainExecutor()
/// Task { @MainActor in print("a main-actor job, run by the main loop"); Loop.main.stop() }
/// Loop.main.run()
/// ```
@_spi(ExperimentalCustomExecutors)
public enum MainLoopExecutorFactory: ExecutorFactory {
    /// ``Loop/main``.
    public static var mainExecutor: any MainExecutor { Loop.main }
    /// The platform's default (Dispatch's global concurrent executor on Linux).
    public static var defaultExecutor: any TaskExecutor { PlatformExecutorFactory.defaultExecutor }
}

extension Loop {
    /// Makes ``Loop/main`` the main actor's executor for the rest of the process (SPI, see
    /// ``MainLoopExecutorFactory``). Call on the main thread before anything is enqueued on the
    /// main actor; afterwards `MainActor.executor` is `Loop.main`, and `@MainActor` code runs
    /// only while the main thread runs the main loop (or outside any task, on the main thread).
    @_spi(ExperimentalCustomExecutors)
    public static func installMainLoopAsMainExecutor() {
        precondition(rlk_is_main_thread() == 1, "Loop.installMainLoopAsMainExecutor() must be called on the main thread")
        _createExecutors(factory: MainLoopExecutorFactory.self)
        precondition(MainActor.executor === Loop.main,
                     "Loop.installMainLoopAsMainExecutor(): the runtime kept its own main executor (called after the main executor was first used?)")
    }
}
