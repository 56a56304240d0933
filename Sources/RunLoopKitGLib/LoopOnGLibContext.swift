import CGLibRuntime
import LoopTime
import RunLoopCore
import RunLoopDiagnostics
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A `Loop` driven by a GLib main context: GLib does the waiting (in `g_main_loop_run`, as a
/// GTK application does), the loop runs its passes inside GLib's iteration — so `Loop.main`
/// with `@MainActor` jobs, `DispatchQueue.main`, timers, observers, pools and commits keeps
/// working under GTK, with no polling. Made by ``GLibMainContext/host(_:mode:priority:)``.
///
/// One GSource (priority ``priority``) carries the loop's hosted run (rules H1–H4 of
/// Docs/Rules.md):
/// - its **prepare** is the top of the loop's pass (`HostedRun.prepare()`: BeforeTimers,
///   BeforeSources, blocks, sources0) and hands GLib the time until the loop's next timer as
///   its timeout — zero when the pass must not wait;
/// - it watches the loop's descriptor (readable when the loop has work: a wake-up, a port, an
///   fd source, a due timer, `@MainActor` jobs, `DispatchQueue.main` work);
/// - the context's poll function is wrapped: when GLib really blocks (a non-zero timeout) the
///   loop gets BeforeWaiting before and AfterWaiting after — pools drain and commits flush once
///   per GLib sleep;
/// - **check** is "descriptor readable or the loop's deadline reached", **dispatch** handles
///   what is ready and finishes the pass.
///
/// When the loop's run ends (`stop()`, or the mode became empty), ``runEnded`` is called with
/// the result and a new run begins at GLib's next iteration (Entry runs again). ``end()`` ends
/// the run and takes the source out of the context. Not `Sendable`: use it on the loop's thread.
public final class LoopOnGLibContext {
    /// The context whose iteration drives the loop.
    public let context: GLibMainContext
    /// The loop GLib drives.
    public let loop: Loop
    /// The mode the hosted runs run.
    public let mode: Loop.Mode
    /// The GSource's priority.
    public let priority: Int32
    /// Called on the loop's thread when a hosted run ends (before the next begins), for example
    /// to quit the `GMainLoop` when the loop was stopped.
    public var runEnded: ((Loop.RunResult) -> Void)?
    /// The result of the last run that ended, nil before the first ends.
    public private(set) var lastResult: Loop.RunResult?

    private let glib: UnsafePointer<rlk_glib>
    private let beginRun: () -> any HostDrivenRun
    /// A new run begins whenever the last one ended; false: only one run (``GLibMainContext/run(_:mode:timeout:returnAfterSourceHandled:)``).
    private let continuous: Bool
    private var runsBegun = 0
    private var run: (any HostDrivenRun)?
    private var source: OpaquePointer?
    /// What the GSource watches: an epoll set holding the current run's descriptor. GLib signals
    /// its own wake-up descriptor whenever a source's descriptors change, which would end its
    /// next sleep at once; a set of our own lets runs (and modes) change without GLib noticing.
    private let watchSet: Int32
    private var watchTag: UnsafeMutableRawPointer?
    /// The run's descriptor in ``watchSet``, or -1.
    private var watchedRunFD: Int32 = -1
    /// What the current pass's prepare said.
    private var wait = HostWait.indefinitely
    /// The loop's deadline was reached at prepare: GLib's next poll (timeout 0) counts as the
    /// loop's sleep, as the loop's own wait for a due deadline does.
    private var sleepsWithoutWaiting = false
    /// Calls into the run in progress (its callouts may iterate GLib again: a nested
    /// `g_main_loop_run`, which must not drive the run that is busy).
    private var busy = 0
    private let hooks: UnsafeMutablePointer<rlk_glib_sleep_hooks>
    /// The second look at GLib inside a sleeping poll (see ``sleepingPoll(_:_:_:)``).
    private var recheck: GLibIteration
    /// Inside that second look, or while the install acknowledges GLib's wake-up: the source's
    /// prepare answers without touching the run.
    private var rechecking = false
    /// GLib's records and the ones the second look added, polled together.
    private var combined: [rlk_GPollFD] = []
    /// The last poll found one of the records only the second look listed ready.
    private var addedWereReady = false

    /// What the bridge counted since it was attached (for benchmarks and tests).
    public struct Counts: Sendable, Equatable {
        /// GLib's polls that could block (each a BeforeWaiting / AfterWaiting pair).
        public var sleeps = 0
        /// Passes the source started (prepare calls that reached the run).
        public var prepares = 0
        /// Dispatches of the source.
        public var dispatches = 0
    }
    /// What the bridge counted since it was attached.
    public private(set) var counts = Counts()

    init(context: GLibMainContext, loop: Loop, mode: Loop.Mode, priority: Int32, continuous: Bool = true,
         beginRun: @escaping () -> any HostDrivenRun) throws(GLibError) {
        guard loop.isOwnerThread else { throw GLibError.notOnLoopThread("GLibMainContext.host(_:mode:priority:)") }
        guard rlk_glib_sleep_hooks_current() == nil else { throw GLibError.alreadyHostingOnThisThread }
        self.context = context
        self.loop = loop
        self.mode = mode
        self.priority = priority
        self.continuous = continuous
        self.glib = context.glib
        self.beginRun = beginRun
        recheck = GLibIteration(glib: context.glib, context: context.pointer)
        do {
            watchSet = try valueOrErrno("epoll_create1") { rlk_glib_epoll_create() }.get()
        } catch {
            throw GLibError.systemCall(error)
        }
        hooks = .allocate(capacity: 1)
        hooks.initialize(to: rlk_glib_sleep_hooks(owner: nil, sleeping_poll: Self.sleepingPoll,
                                                  previous: context.glib.pointee.g_poll))
        try install()
    }

    deinit {
        hooks.deinitialize(count: 1)
        hooks.deallocate()
        closeDescriptor(watchSet, "the GLib bridge's watched set")
    }

    // MARK: - The GSource

    /// What the source does in GLib's calls. The source's owner pointer is the bridge,
    /// retained by the source and released when GLib finalizes it.
    private static let callbacks = rlk_glib_source_callbacks(
        prepare: { owner, timeout in bridge(owner).prepare(timeout: timeout) ? 1 : 0 },
        check: { owner in bridge(owner).check() ? 1 : 0 },
        dispatch: { owner in bridge(owner).dispatch() },
        finalize: { owner in Unmanaged<LoopOnGLibContext>.fromOpaque(owner!).release() })

    private static func bridge(_ owner: UnsafeMutableRawPointer?) -> LoopOnGLibContext {
        Unmanaged<LoopOnGLibContext>.fromOpaque(owner!).takeUnretainedValue()
    }

    private static let sleepingPoll: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<rlk_GPollFD>, UInt32, Int32) -> Int32 = {
        owner, fds, count, timeout in
        Unmanaged<LoopOnGLibContext>.fromOpaque(owner!).takeUnretainedValue().sleepingPoll(fds, count, timeout)
    }

    private func install() throws(GLibError) {
        // The thread must be able to iterate the context: GLib's other thread would call the
        // source, and the poll function's hooks are this thread's.
        guard glib.pointee.g_main_context_acquire(context.pointer) != 0 else { throw GLibError.contextOwnedByAnotherThread }
        defer { glib.pointee.g_main_context_release(context.pointer) }
        let retained = Unmanaged.passRetained(self).toOpaque()
        guard let source = rlk_glib_owned_source_new(glib, Self.callbacks, retained) else {
            Unmanaged<LoopOnGLibContext>.fromOpaque(retained).release()
            throw GLibError.sourceNotCreated
        }
        self.source = source
        glib.pointee.g_source_set_priority(source, priority)
        glib.pointee.g_source_set_name(source, "RunLoopKit loop")
        // GLib blocks a source that cannot recurse while it dispatches, which takes its
        // descriptors out of the context and puts them back: each time GLib signals its own
        // wake-up, and the next sleep would end at once (a BeforeWaiting / AfterWaiting pair
        // with nothing done). A nested GLib loop inside a callout finds the run busy instead.
        glib.pointee.g_source_set_can_recurse(source, 1)
        watchTag = glib.pointee.g_source_add_unix_fd(source, watchSet, UInt32(RLK_G_IO_IN))
        hooks.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        hooks.pointee.previous = glib.pointee.g_main_context_get_poll_func(context.pointer)
        rlk_glib_set_sleep_hooks(hooks)
        glib.pointee.g_main_context_set_poll_func(context.pointer, rlk_glib_hooked_poll)
        _ = glib.pointee.g_source_attach(source, context.pointer)
        acknowledgeGLibWakeUp()
    }

    /// Adding the descriptor signalled GLib's wake-up descriptor; one iteration without
    /// dispatching (prepare, query, poll without waiting, check) acknowledges it, so the first
    /// sleep is a real one. The source takes no part in it.
    private func acknowledgeGLibWakeUp() {
        rechecking = true
        defer { rechecking = false }
        var iteration = GLibIteration(glib: glib, context: context.pointer)
        let prepared = iteration.prepare()
        _ = iteration.query(priority: prepared.priority)
        iteration.pollWithoutWaiting()
        _ = iteration.check(priority: prepared.priority)
    }

    /// Puts `fd` (the run's descriptor, -1 for none) in the watched set in place of the last.
    private func watchRun(_ fd: Int32) {
        guard fd != watchedRunFD else { return }
        if watchedRunFD >= 0 {
            // A run's descriptor closed already is out of the set (EBADF, ENOENT): nothing to do.
            if case .failure(let failure) = valueOrErrno("epoll_ctl(DEL)", {
                rlk_glib_epoll_control(watchSet, RLK_GLIB_EPOLL_REMOVE, watchedRunFD, 0)
            }), failure.code != EBADF, failure.code != ENOENT {
                Diagnostics.report(.error, .glibSystemCallFailed, "unwatching the loop's last descriptor: \(failure)")
            }
            watchedRunFD = -1
        }
        guard fd >= 0 else { return }
        if case .failure(let failure) = valueOrErrno("epoll_ctl(ADD)", { rlk_glib_epoll_control(watchSet, RLK_GLIB_EPOLL_ADD, fd, UInt32(RLK_G_IO_IN)) }) {
            // Without the descriptor GLib would sleep through the loop's work: poll instead.
            Diagnostics.report(.error, .glibSystemCallFailed,
                               "watching the loop's descriptor: \(failure); GLib polls the loop every millisecond instead")
            return
        }
        watchedRunFD = fd
    }

    /// Ends the hosted run (Exit observers), takes the source out of the context and gives the
    /// context its poll function back. Idempotent; on the loop's thread.
    public func end() {
        precondition(loop.isOwnerThread, "LoopOnGLibContext.end() must be called on the loop's own thread")
        guard let source else { return }
        self.source = nil
        if let run {
            self.run = nil
            lastResult = run.end()
        }
        watchRun(-1)
        if rlk_glib_sleep_hooks_current() == hooks {
            rlk_glib_set_sleep_hooks(nil)
            glib.pointee.g_main_context_set_poll_func(context.pointer, hooks.pointee.previous)
        }
        // Destroying drops the context's reference; the last unref finalizes the source,
        // which releases the bridge's own reference.
        glib.pointee.g_source_destroy(source)
        glib.pointee.g_source_unref(source)
    }

    /// True while the bridge is in the context (from ``GLibMainContext/host(_:mode:priority:)``
    /// until ``end()``).
    public var isAttached: Bool { source != nil }

    // MARK: - GLib's iteration

    private func prepare(timeout: UnsafeMutablePointer<Int32>) -> Bool {
        timeout.pointee = -1
        if !rechecking { sleepsWithoutWaiting = false }
        guard source != nil, loop.isOwnerThread else { return false }
        if rechecking {
            // GLib is asleep on the loop's behalf: what the loop said still holds.
            return glibTimeout(timeout)
        }
        if busy > 0 {
            // A GLib loop nested in one of the run's callouts: the run cannot take a pass now,
            // and its descriptor must not keep the nested loop awake.
            watchRun(-1)
            return false
        }
        guard let run = currentRun() else { return afterLastRun(timeout) }
        counts.prepares += 1
        busy += 1
        wait = run.prepare()
        busy -= 1
        if let result = run.result {
            // The host had not dispatched the previous pass, and that pass ended the run.
            finished(result)
            return afterLastRun(timeout)
        }
        watchRun(run.descriptor)
        if watchedRunFD < 0 && wait != .no {
            // The descriptor could not be watched (reported): come back in a millisecond.
            wait = .until(loop.clock.now.advanced(by: .milliseconds(1)))
        }
        return glibTimeout(timeout)
    }

    /// No run to drive: a single run that ended must not let GLib sleep (its caller is waiting
    /// for the iteration to return); a continuous bridge whose new run ended at once (an empty
    /// mode) leaves GLib's sleep to GLib's own sources, and tries again at the next iteration.
    private func afterLastRun(_ timeout: UnsafeMutablePointer<Int32>) -> Bool {
        timeout.pointee = continuous ? -1 : 0
        return false
    }

    /// GLib's timeout for ``wait`` in milliseconds, rounded up so the loop's timer is due at the
    /// wake; true when the source is ready now. On a virtual clock GLib gets no timeout of the
    /// loop's: the sleeping poll moves the clock instead (as the loop's own virtual wait does).
    private func glibTimeout(_ timeout: UnsafeMutablePointer<Int32>) -> Bool {
        switch wait {
        case .no:
            timeout.pointee = 0
            return true
        case .indefinitely:
            timeout.pointee = -1
            return false
        case .until(let instant):
            let now = loop.clock.now
            if now >= instant {
                // Due already: the loop's own wait would return at once, after BeforeWaiting
                // and before AfterWaiting (a timer overdue at the top of a pass). So does
                // GLib's poll, which the poll function treats as a sleep of no length.
                timeout.pointee = 0
                sleepsWithoutWaiting = true
                return false
            }
            if loop.clock.isVirtual {
                timeout.pointee = -1
                return false
            }
            let nanoseconds = instant.nanoseconds - now.nanoseconds
            timeout.pointee = Int32(clamping: (nanoseconds + 999_999) / 1_000_000)
            return false
        }
    }

    private func check() -> Bool {
        guard let source, let watchTag, busy == 0, run != nil else { return false }
        let ready = glib.pointee.g_source_query_unix_fd(source, watchTag)
        if ready & UInt32(RLK_G_IO_IN | RLK_G_IO_HUP | RLK_G_IO_ERR) != 0 { return true }
        if case .until(let instant) = wait { return loop.clock.now >= instant }
        return false
    }

    private func dispatch() {
        guard source != nil, loop.isOwnerThread, busy == 0, let run else { return }
        counts.dispatches += 1
        wait = .indefinitely
        busy += 1
        let result = run.dispatch()
        busy -= 1
        if let result { finished(result) }
    }

    /// The run in progress, or a new one when the last ended (once only for a single run).
    private func currentRun() -> (any HostDrivenRun)? {
        if let run { return run }
        guard continuous || runsBegun == 0 else { return nil }
        runsBegun += 1
        busy += 1
        let run = beginRun()   // Entry runs here
        busy -= 1
        if let result = run.result {
            // An empty mode, or a stop before the first pass: nothing to drive (H1).
            finished(result)
            return nil
        }
        self.run = run
        return run
    }

    private func finished(_ result: Loop.RunResult) {
        run = nil
        wait = .indefinitely
        watchRun(-1)
        lastResult = result
        runEnded?(result)
    }

    /// A poll in which GLib may block: BeforeWaiting, the poll, AfterWaiting.
    ///
    /// GLib decided this poll's descriptors and timeout before BeforeWaiting's callouts ran, and
    /// those may attach GLib sources (a commit that updates a GTK widget queues a redraw, a GLib
    /// timeout). So after BeforeWaiting GLib is prepared and queried once more: the poll is
    /// bounded by the earlier of both timeouts (zero if a source is ready now) and also watches
    /// the descriptors added meanwhile. What the second look finds is dispatched by GLib's next
    /// iteration, which this poll's early return brings about.
    ///
    /// On a virtual clock the poll does not wait for the loop's deadline: when nothing is ready
    /// the clock jumps to it, as the loop's own virtual wait does.
    private func sleepingPoll(_ fds: UnsafeMutablePointer<rlk_GPollFD>, _ count: UInt32, _ timeout: Int32) -> Int32 {
        let previous = hooks.pointee.previous
        guard busy == 0, let run, timeout != 0 || sleepsWithoutWaiting else { return previous(fds, count, timeout) }
        sleepsWithoutWaiting = false
        counts.sleeps += 1
        busy += 1
        run.hostWillSleep()
        busy -= 1
        var timeout = timeout
        rechecking = true
        let again = recheck.prepare()
        let later = recheck.query(priority: again.priority)
        rechecking = false
        if again.ready || later == 0 {
            timeout = 0
        } else if later > 0 {
            timeout = timeout < 0 ? later : min(timeout, later)
        }
        var polled: Int32
        if let virtualClock = loop.clock as? VirtualClock, timeout != 0 {
            polled = pollWithAdded(fds, Int(count), 0, previous: previous)
            if polled == 0 && !addedWereReady {
                if case .until(let instant) = wait {
                    virtualClock.advance(to: instant)
                } else {
                    polled = pollWithAdded(fds, Int(count), timeout, previous: previous)
                }
            }
        } else {
            polled = pollWithAdded(fds, Int(count), timeout, previous: previous)
        }
        let saved = errno
        busy += 1
        run.hostDidWake()
        busy -= 1
        errno = saved
        return polled
    }

    /// Polls GLib's `fds` together with the descriptors the second look listed that they lack;
    /// writes the readiness of GLib's own back into `fds`.
    private func pollWithAdded(_ fds: UnsafeMutablePointer<rlk_GPollFD>, _ count: Int, _ timeout: Int32,
                               previous: rlk_GPollFunc) -> Int32 {
        addedWereReady = false
        let glibs = UnsafeMutableBufferPointer(start: fds, count: count)
        func isAdded(_ record: rlk_GPollFD) -> Bool { !glibs.contains { $0.fd == record.fd } }
        guard recheck.withRecords({ $0.contains(where: isAdded) }) else { return previous(fds, UInt32(count), timeout) }
        combined.removeAll(keepingCapacity: true)
        combined.append(contentsOf: glibs)
        recheck.withRecords { records in
            for record in records where isAdded(record) { combined.append(record) }
        }
        let total = UInt32(combined.count)
        let polled = combined.withUnsafeMutableBufferPointer { previous($0.baseAddress!, total, timeout) }
        guard polled >= 0 else { return polled }
        var ready: Int32 = 0
        for index in 0..<count {
            fds[index].revents = combined[index].revents
            if combined[index].revents != 0 { ready += 1 }
        }
        addedWereReady = combined[count...].contains { $0.revents != 0 }
        // Something only the second look listed is ready: GLib's poll returns all the same
        // (with nothing of its own ready), so its next iteration dispatches it.
        return ready
    }
}
