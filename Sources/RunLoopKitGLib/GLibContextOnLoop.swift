import CGLibRuntime
import LoopTime
import RunLoopCore
import RunLoopDiagnostics

extension Loop {
    /// Runs GLib's `context` inside this loop's `mode`, so a library that needs GLib's main loop
    /// (GIO, D-Bus) works in a program whose thread runs a `Loop`.
    ///
    /// GLib's descriptors and its next timeout become items of the mode, and its sources
    /// dispatch inside the loop's callouts (see ``GLibContextOnLoop`` for the mapping). Call on
    /// the loop's thread; the thread acquires the context (`g_main_context_acquire`) until
    /// ``GLibContextOnLoop/detach()``.
    ///
    /// ```swift
    /// let loop = Loop.current
    /// let glib = try loop.attach(try GLibMainContext.defaultContext(), mode: .default)
    /// loop.run(mode: .default, timeout: .seconds(1))   // GLib's sources run as loop callouts
    /// glib.detach()
    /// ```
    ///
    /// - Parameters:
    ///   - context: the GLib context to run.
    ///   - mode: the mode whose runs iterate it; `.common` for every common mode.
    /// - Throws: ``GLibError/virtualClock`` for a loop on a virtual clock (GLib's time is
    ///   real), ``GLibError/notOnLoopThread(_:)``, ``GLibError/contextOwnedByAnotherThread``,
    ///   ``GLibError/systemCall(_:)`` when the descriptor set cannot be created,
    ///   ``GLibError/itemRefused(_:)`` when the loop refuses an item. Nothing stays attached.
    public func attach(_ context: GLibMainContext, mode: Loop.Mode = .default) throws(GLibError) -> GLibContextOnLoop {
        guard !clock.isVirtual else { throw GLibError.virtualClock }
        guard isOwnerThread else { throw GLibError.notOnLoopThread("Loop.attach(_:mode:)") }
        let attachment = try GLibContextOnLoop(context: context, loop: self, mode: mode)
        try attachment.install()
        return attachment
    }
}

/// A GLib main context iterated by a `Loop` mode: the loop does the waiting, GLib
/// the rest of its iteration.
///
/// What runs when, in one pass of the mode (`Docs/Hosting.md` has the figure):
/// - **BeforeSources** (observer `GLib prepare`, order ``prepareOrder``): `g_main_context_prepare`.
///   When a GLib source is ready already, the source0 `GLib dispatch` is signalled, so it
///   checks and dispatches in this pass and the pass does not sleep — as GLib itself does not
///   wait when a source is ready.
/// - **BeforeWaiting** (observer `GLib query`, order ``queryOrder``: after the commit and the
///   pool observers): prepare and `g_main_context_query` again, so sources attached by this
///   pass's callouts count. GLib's descriptors go into an epoll set the loop watches as the fd
///   source `GLib descriptors`; GLib's timeout arms the timer `GLib timeout`. If GLib has
///   something ready now, the loop is woken (`wakeUp`) so the wait returns at once.
/// - **After the wait**: the fd source or the timer fires; its callout polls GLib's
///   descriptors without waiting, then `g_main_context_check` and `g_main_context_dispatch`.
///   Every GLib callback therefore runs inside a loop callout, which traces see.
///
/// The object stays attached, driven by the loop, until ``detach()``. Not `Sendable`: use it on
/// the loop's thread.
public final class GLibContextOnLoop {
    /// The context the loop iterates.
    public let context: GLibMainContext
    /// The loop that iterates it.
    public let loop: Loop
    /// The mode whose runs iterate it.
    public let mode: Loop.Mode

    /// Order of the BeforeSources observer `GLib prepare`: before any other.
    public static let prepareOrder = Int.min
    /// Order of the BeforeWaiting observer `GLib query`: after every other (commit 2000000,
    /// pool 2147483647), so what they attach to GLib is seen before the loop sleeps.
    public static let queryOrder = Int.max

    /// Where the iteration stands.
    private enum Phase {
        /// Nothing prepared since the last check.
        case idle
        /// BeforeSources' prepare found a source ready; the query is still to be made.
        case prepared(priority: Int32)
        /// Prepared and queried before the wait: check and dispatch after it.
        case queried(priority: Int32)
        /// Checked before the wait, with sources ready: dispatch next.
        case checked
    }

    private struct Items {
        let prepare: LoopObserver
        let query: LoopObserver
        let dispatch: LoopSource
        var descriptors: LoopFileSource
        let timeout: LoopTimer
    }

    private var iteration: GLibIteration
    private var descriptors: GLibDescriptorSet
    private var phase = Phase.idle
    private var items: Items?
    /// The descriptor set could not be brought up to date: GLib is polled every
    /// ``degradedPollInterval`` until a rebuild succeeds.
    private var degraded = false
    private static let degradedPollInterval: Int32 = 10
    /// How many times the descriptor set was rebuilt (for the tests).
    private(set) var descriptorSetRebuilds = 0

    /// True from attaching until ``detach()``.
    public var isAttached: Bool { items != nil }

    fileprivate init(context: GLibMainContext, loop: Loop, mode: Loop.Mode) throws(GLibError) {
        self.context = context
        self.loop = loop
        self.mode = mode
        iteration = GLibIteration(glib: context.glib, context: context.pointer)
        do {
            descriptors = try GLibDescriptorSet()
        } catch {
            throw GLibError.systemCall(error)
        }
    }

    /// Acquires the context and adds the items; on failure, undoes what it did.
    fileprivate func install() throws(GLibError) {
        guard context.glib.pointee.g_main_context_acquire(context.pointer) != 0 else {
            throw GLibError.contextOwnedByAnotherThread
        }
        let bound = LoopBound(self, loop: loop)
        let prepare = LoopObserver(activities: .beforeSources, order: Self.prepareOrder, label: "GLib prepare") { _, _ in
            bound.value.prepareBeforeSources()
        }
        let query = LoopObserver(activities: .beforeWaiting, order: Self.queryOrder, label: "GLib query") { _, _ in
            bound.value.queryBeforeWaiting()
        }
        let dispatch = LoopSource(label: "GLib dispatch") { bound.value.finishIteration() }
        let timeout: LoopTimer
        do {
            // Repeating with a long interval, so one timer serves every wait: each
            // BeforeWaiting moves its next fire date.
            timeout = try LoopTimer(fireAt: .distantFuture, interval: .seconds(86_400), label: "GLib timeout") { _ in
                bound.value.finishIteration()
            }
        } catch {
            context.glib.pointee.g_main_context_release(context.pointer)
            throw GLibError.itemRefused("the GLib timeout timer (\(error))")
        }
        let items = Items(prepare: prepare, query: query, dispatch: dispatch,
                          descriptors: makeDescriptorSource(bound: bound, fd: descriptors.epollFD), timeout: timeout)
        self.items = items
        let outcomes: [(String, Loop.AddOutcome)] = [
            ("the observer 'GLib prepare'", loop.add(prepare, mode: mode)),
            ("the observer 'GLib query'", loop.add(query, mode: mode)),
            ("the source 'GLib dispatch'", loop.add(dispatch, mode: mode)),
            ("the fd source 'GLib descriptors'", loop.add(items.descriptors, mode: mode)),
            ("the timer 'GLib timeout'", loop.add(timeout, mode: mode)),
        ]
        if let refused = outcomes.first(where: { $0.1 != .added }) {
            detach()
            throw GLibError.itemRefused("\(refused.0): \(refused.1)")
        }
    }

    private func makeDescriptorSource(bound: LoopBound<GLibContextOnLoop>, fd: Int32) -> LoopFileSource {
        LoopFileSource(fd: fd, events: .readable, label: "GLib descriptors") { _ in
            bound.value.finishIteration()
        }
    }

    /// Removes the items from the loop and releases the context. Idempotent; on the loop's
    /// thread.
    public func detach() {
        precondition(loop.isOwnerThread, "GLibContextOnLoop.detach() must be called on the loop's own thread")
        guard let items else { return }
        self.items = nil
        items.prepare.invalidate()
        items.query.invalidate()
        items.dispatch.invalidate()
        items.descriptors.invalidate()
        items.timeout.invalidate()
        phase = .idle
        context.glib.pointee.g_main_context_release(context.pointer)
    }

    // MARK: - The iteration, step by step

    /// BeforeSources: a source ready now is checked and dispatched in this pass.
    private func prepareBeforeSources() {
        guard let items else { return }
        let prepared = iteration.prepare()
        if prepared.ready {
            phase = .prepared(priority: prepared.priority)
            items.dispatch.signal()
        } else {
            phase = .idle
        }
    }

    /// BeforeWaiting: the last look before the loop sleeps; sets what wakes it.
    private func queryBeforeWaiting() {
        guard let items else { return }
        var prepared = iteration.prepare()
        var timeout = queryAndWatch(priority: prepared.priority)
        if !prepared.ready && timeout != 0 && !descriptors.hasUnwatchable && iteration.pollWithoutWaiting() {
            // A descriptor is ready already. Often it is only GLib's wake-up descriptor, which
            // GLib signals whenever a descriptor is added or removed: checking acknowledges it,
            // and the loop still sleeps. If a source is ready, dispatch without sleeping.
            if iteration.check(priority: prepared.priority) {
                phase = .checked
                items.dispatch.signal()
                loop.wakeUp()
                return
            }
            prepared = iteration.prepare()
            timeout = queryAndWatch(priority: prepared.priority)
        }
        phase = .queried(priority: prepared.priority)
        if degraded { timeout = timeout < 0 ? Self.degradedPollInterval : min(timeout, Self.degradedPollInterval) }
        if prepared.ready || timeout == 0 || descriptors.hasUnwatchable {
            // GLib would not sleep: neither may the loop. This pass's wait returns at once.
            items.dispatch.signal()
            loop.wakeUp()
        } else if timeout > 0 {
            items.timeout.setNextFireDate(loop.clock.now.advanced(by: .milliseconds(timeout)))
        } else {
            items.timeout.setNextFireDate(.distantFuture)
        }
    }

    /// Queries GLib and brings the watched descriptors up to date; returns GLib's timeout.
    private func queryAndWatch(priority: Int32) -> Int32 {
        let timeout = iteration.query(priority: priority)
        updateDescriptors()
        return timeout
    }

    /// After a wait (or in the dispatch source0): poll without waiting, check, dispatch — a
    /// whole iteration when none was begun.
    private func finishIteration() {
        guard items != nil else { return }
        let priority: Int32
        switch phase {
        case .idle:
            let prepared = iteration.prepare()
            priority = prepared.priority
            _ = iteration.query(priority: priority)
        case .prepared(let prepared):
            priority = prepared
            _ = iteration.query(priority: priority)
        case .queried(let queried):
            priority = queried
        case .checked:
            // Before dispatching: a nested run inside a GLib callback begins its own iteration.
            phase = .idle
            iteration.dispatch()
            return
        }
        phase = .idle
        iteration.pollWithoutWaiting()
        if iteration.check(priority: priority) { iteration.dispatch() }
    }

    /// Brings the epoll set up to GLib's last query, rebuilding it when a number changed files.
    private func updateDescriptors() {
        guard var items else { return }
        do {
            let outcome = try iteration.withRecords { records throws(SystemCallError) in try descriptors.sync(records) }
            guard case .needsRebuild = outcome else { degraded = false; return }
        } catch {
            Diagnostics.report(.warning, .glibSystemCallFailed, "updating GLib's descriptor set: \(error); rebuilding it")
        }
        do throws(GLibError) {
            var fresh: GLibDescriptorSet
            do { fresh = try GLibDescriptorSet() } catch { throw GLibError.systemCall(error) }
            do {
                _ = try iteration.withRecords { records throws(SystemCallError) in try fresh.sync(records) }
            } catch {
                throw GLibError.systemCall(error)
            }
            let source = makeDescriptorSource(bound: LoopBound(self, loop: loop), fd: fresh.epollFD)
            let outcome = loop.add(source, mode: mode)
            guard outcome == .added else { throw GLibError.itemRefused("the fd source 'GLib descriptors': \(outcome)") }
            // The old source leaves the loop before its descriptor is closed (by the old set's
            // deinit, when `fresh` replaces it).
            items.descriptors.invalidate()
            items.descriptors = source
            self.items = items
            descriptors = fresh
            degraded = false
            descriptorSetRebuilds += 1
        } catch {
            Diagnostics.report(.error, .glibSystemCallFailed,
                               "rebuilding GLib's descriptor set: \(error); GLib is polled every \(Self.degradedPollInterval) ms until it succeeds")
            degraded = true
        }
    }
}
