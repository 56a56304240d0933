import CGLibRuntime
import RunLoopCore

extension GLibMainContext {
    /// Lets this context's iteration drive `loop`: while the thread runs GLib's main loop
    /// (`g_main_loop_run`, `gtk_main`, `g_application_run`), the loop's runs of `mode` run inside
    /// it — `@MainActor` jobs, `DispatchQueue.main`, timers, sources, observers, pools and
    /// commits in CF's order, with BeforeWaiting and AfterWaiting at GLib's real sleeps (H1–H4).
    ///
    /// Call on the loop's thread, which must be the thread that iterates the context (for
    /// `Loop.main`, the main thread and ``defaultContext()``). Until
    /// ``LoopOnGLibContext/end()``, a run of `mode` is always in progress: when one ends (a
    /// `stop()`), ``LoopOnGLibContext/runEnded`` is called and the next begins at GLib's next
    /// iteration.
    ///
    /// ```swift
    /// let context = try GLibMainContext.defaultContext()
    /// let hosted = try context.host(Loop.main)
    /// // … g_main_loop_run(…) or the toolkit's own main loop …
    /// hosted.end()
    /// ```
    ///
    /// - Parameters:
    ///   - loop: the loop to drive (on a virtual clock, GLib's sleeps move the clock instead of
    ///     waiting for the loop's deadlines).
    ///   - mode: the mode the runs run (not `.common`).
    ///   - priority: the GSource's GLib priority (`G_PRIORITY_DEFAULT`, 0, by default: GTK's
    ///     redraws, at `G_PRIORITY_HIGH_IDLE + 20`, come after it).
    /// - Throws: ``GLibError/notOnLoopThread(_:)``, ``GLibError/contextOwnedByAnotherThread``,
    ///   ``GLibError/alreadyHostingOnThisThread``, ``GLibError/sourceNotCreated``,
    ///   ``GLibError/systemCall(_:)``. Nothing stays attached.
    public func host(_ loop: Loop, mode: Loop.Mode = .default,
                     priority: Int32 = Int32(RLK_G_PRIORITY_DEFAULT)) throws(GLibError) -> LoopOnGLibContext {
        try LoopOnGLibContext(context: self, loop: loop, mode: mode, priority: priority) {
            loop.beginHostedRun(mode: mode)
        }
    }

    /// Runs `loop` once in `mode` with GLib doing the waiting, as `loop.run(mode:timeout:…)` does
    /// with its own: iterates this context (`g_main_context_iteration`, blocking) until the run
    /// ends, GLib's other sources dispatching meanwhile. On the loop's thread.
    ///
    /// ```swift
    /// let loop = Loop.current
    /// let timer = try LoopTimer(fireAt: loop.clock.now.advanced(by: .milliseconds(5)), label: "t") { _ in print("fired") }
    /// loop.add(timer, mode: .default)
    /// print(try GLibMainContext().run(loop, timeout: .milliseconds(20)))
    /// ```
    ///
    /// - Returns: the run's result, as `Loop.run(mode:timeout:returnAfterSourceHandled:)`
    ///   returns it.
    /// - Throws: as ``host(_:mode:priority:)``; a run of a context hosted on this thread already
    ///   (also a nested one) is ``GLibError/alreadyHostingOnThisThread``.
    public func run(_ loop: Loop, mode: Loop.Mode = .default, timeout: Duration? = nil,
                    returnAfterSourceHandled: Bool = false) throws(GLibError) -> Loop.RunResult {
        try run(loop, mode: mode, timeout: timeout, returnAfterSourceHandled: returnAfterSourceHandled,
                iterationLimit: .max).result
    }

    /// ``run(_:mode:timeout:returnAfterSourceHandled:)`` that gives up after `iterationLimit`
    /// GLib iterations (the run is ended then, as ``LoopOnGLibContext/end()`` ends it), for
    /// tests that must stay bounded; also returns how many iterations the run took.
    func run(_ loop: Loop, mode: Loop.Mode, timeout: Duration?, returnAfterSourceHandled: Bool,
             iterationLimit: Int) throws(GLibError) -> (result: Loop.RunResult, iterations: Int, limitReached: Bool) {
        // Held for the whole run: g_main_context_iteration on a context another thread owns
        // would return at once, every time.
        guard glib.pointee.g_main_context_acquire(pointer) != 0 else { throw GLibError.contextOwnedByAnotherThread }
        defer { glib.pointee.g_main_context_release(pointer) }
        let bridge = try LoopOnGLibContext(context: self, loop: loop, mode: mode, priority: Int32(RLK_G_PRIORITY_DEFAULT),
                                           continuous: false) {
            loop.beginHostedRun(mode: mode, timeout: timeout, returnAfterSourceHandled: returnAfterSourceHandled)
        }
        var iterations = 0
        while bridge.lastResult == nil && iterations < iterationLimit {
            _ = glib.pointee.g_main_context_iteration(pointer, 1)
            iterations += 1
        }
        let limitReached = bridge.lastResult == nil
        bridge.end()
        return (bridge.lastResult ?? .finished, iterations, limitReached)
    }
}
