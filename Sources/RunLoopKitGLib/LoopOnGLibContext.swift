import CGLibRuntime
import RunLoopCore
import RunLoopDiagnostics
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A `Loop` driven by a GLib main context: GLib does the waiting (in
/// `g_main_loop_run`, as a GTK application does), the loop runs its passes inside GLib's
/// iteration — so `Loop.main` with `@MainActor` jobs, `DispatchQueue.main`, timers, observers,
/// pools and commits keeps working under GTK, with no polling.
///
/// One GSource (priority ``priority``) carries the loop:
/// - its **prepare** starts the loop's pass up to the wait (BeforeTimers, BeforeSources, blocks,
///   sources0) and hands GLib the time until the loop's next timer as its timeout — zero when
///   the pass must not wait;
/// - the loop's descriptor is one of the source's descriptors (`g_source_add_unix_fd`, readable
///   when the loop has work: a wake-up, a port, an fd source, a due timer, queued jobs);
/// - the context's poll function is wrapped: when GLib really blocks (non-zero timeout) the loop
///   gets BeforeWaiting before and AfterWaiting after — pools drain and commits flush once per
///   GLib sleep;
/// - **check** is "descriptor readable or deadline reached", **dispatch** handles what is ready
///   and finishes the pass.
///
/// When the loop's run ends (`stop()`, or the mode became empty), ``runEnded`` is called with the
/// result and a new run begins at GLib's next iteration. ``end()`` ends the run and takes the
/// source out of the context. Not `Sendable`: use it on the loop's thread.
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

    private let glib: UnsafePointer<rlk_glib>
    private let beginRun: () -> any HostDrivenRun
    private var run: (any HostDrivenRun)?
    private var source: OpaquePointer?
    /// The descriptor the source watches and GLib's tag for it.
    private var watched: (fd: Int32, tag: UnsafeMutableRawPointer)?
    /// GLib's monotonic time (microseconds) at which the loop's next timer is due; nil: none.
    private var deadline: Int64?
    private let hooks: UnsafeMutablePointer<rlk_glib_sleep_hooks>
    /// The second look at GLib inside a sleeping poll (see ``sleepingPoll(_:_:_:)``).
    private var recheck: GLibIteration
    /// Inside that second look: the source's prepare answers from what it said before.
    private var rechecking = false
    /// GLib's records and the ones the second look added, polled together.
    private var combined: [rlk_GPollFD] = []

    /// What the bridge counted since it was attached (for benchmarks and tests).
    public struct Counts: Sendable, Equatable {
        /// GLib's polls that could block (each a BeforeWaiting / AfterWaiting pair).
        public var sleeps = 0
        /// Passes the source started (prepare calls on the loop's thread).
        public var prepares = 0
        /// Dispatches of the source.
        public var dispatches = 0
    }
    /// What the bridge counted since it was attached.
    public private(set) var counts = Counts()

    init(context: GLibMainContext, loop: Loop, mode: Loop.Mode, priority: Int32,
         beginRun: @escaping () -> any HostDrivenRun) throws(GLibError) {
        guard loop.isOwnerThread else { throw GLibError.notOnLoopThread("GLibMainContext.host(_:mode:priority:)") }
        guard rlk_glib_sleep_hooks_current() == nil else { throw GLibError.alreadyHostingOnThisThread }
        self.context = context
        self.loop = loop
        self.mode = mode
        self.priority = priority
        self.glib = context.glib
        self.beginRun = beginRun
        recheck = GLibIteration(glib: context.glib, context: context.pointer)
        hooks = .allocate(capacity: 1)
        hooks.initialize(to: rlk_glib_sleep_hooks(owner: nil, sleeping_poll: Self.sleepingPoll,
                                                  previous: context.glib.pointee.g_poll))
        try install()
    }

    deinit {
        hooks.deinitialize(count: 1)
        hooks.deallocate()
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
        let retained = Unmanaged.passRetained(self).toOpaque()
        guard let source = rlk_glib_owned_source_new(glib, Self.callbacks, retained) else {
            Unmanaged<LoopOnGLibContext>.fromOpaque(retained).release()
            throw GLibError.sourceNotCreated
        }
        self.source = source
        glib.pointee.g_source_set_priority(source, priority)
        glib.pointee.g_source_set_name(source, "RunLoopKit loop")
        let run = beginRun()
        self.run = run
        watch(run.descriptor)
        hooks.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        hooks.pointee.previous = glib.pointee.g_main_context_get_poll_func(context.pointer)
        rlk_glib_set_sleep_hooks(hooks)
        glib.pointee.g_main_context_set_poll_func(context.pointer, rlk_glib_hooked_poll)
        _ = glib.pointee.g_source_attach(source, context.pointer)
    }

    /// Makes the source watch `fd` for readability (the loop's descriptor may differ per run).
    private func watch(_ fd: Int32) {
        guard let source, watched?.fd != fd else { return }
        if let watched { glib.pointee.g_source_remove_unix_fd(source, watched.tag) }
        watched = (fd, glib.pointee.g_source_add_unix_fd(source, fd, UInt32(RLK_G_IO_IN)))
    }

    /// Ends the hosted run (Exit observers), takes the source out of the context and gives the
    /// context its poll function back. Idempotent; on the loop's thread.
    public func end() {
        precondition(loop.isOwnerThread, "LoopOnGLibContext.end() must be called on the loop's own thread")
        guard let source else { return }
        self.source = nil
        run?.end()
        run = nil
        if rlk_glib_sleep_hooks_current() == hooks {
            rlk_glib_set_sleep_hooks(nil)
            glib.pointee.g_main_context_set_poll_func(context.pointer, hooks.pointee.previous)
        }
        // Destroying drops the context's reference; the last unref finalizes the source,
        // which releases the bridge's own reference.
        glib.pointee.g_source_destroy(source)
        glib.pointee.g_source_unref(source)
    }

    // MARK: - GLib's iteration

    private func prepare(timeout: UnsafeMutablePointer<Int32>) -> Bool {
        guard source != nil, loop.isOwnerThread else {
            timeout.pointee = -1
            return false
        }
        if rechecking {
            // GLib is asleep on the loop's behalf: what the loop said still holds.
            timeout.pointee = deadline.map { Self.milliseconds(until: $0, now: glib.pointee.g_get_monotonic_time()) } ?? -1
            return false
        }
        counts.prepares += 1
        let run = currentRun()
        guard let wait = run.prepare() else {
            deadline = nil
            timeout.pointee = -1
            return false
        }
        if wait <= .zero {
            deadline = nil
            timeout.pointee = 0
            return true
        }
        let microseconds = Self.microseconds(roundingUp: wait)
        deadline = glib.pointee.g_get_monotonic_time() &+ microseconds
        // GLib's timeout is in milliseconds: rounded up, so the loop's timer is due at the wake.
        timeout.pointee = Int32(clamping: (microseconds + 999) / 1000)
        return false
    }

    private func check() -> Bool {
        guard let source, let watched else { return false }
        let ready = glib.pointee.g_source_query_unix_fd(source, watched.tag)
        if ready & UInt32(RLK_G_IO_IN | RLK_G_IO_HUP | RLK_G_IO_ERR) != 0 { return true }
        guard let deadline else { return false }
        return glib.pointee.g_get_monotonic_time() >= deadline
    }

    private func dispatch() {
        guard source != nil, loop.isOwnerThread, let run else { return }
        counts.dispatches += 1
        deadline = nil
        guard let result = run.dispatch() else { return }
        self.run = nil
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
    private func sleepingPoll(_ fds: UnsafeMutablePointer<rlk_GPollFD>, _ count: UInt32, _ timeout: Int32) -> Int32 {
        let previous = hooks.pointee.previous
        guard let run else { return previous(fds, count, timeout) }
        counts.sleeps += 1
        run.hostWillSleep()
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
        let polled = pollWithAdded(fds, Int(count), timeout, previous: previous)
        let saved = errno
        run.hostDidWake()
        errno = saved
        return polled
    }

    /// Polls GLib's `fds` together with the descriptors the second look listed that they lack;
    /// writes the readiness of GLib's own back into `fds`.
    private func pollWithAdded(_ fds: UnsafeMutablePointer<rlk_GPollFD>, _ count: Int, _ timeout: Int32,
                               previous: rlk_GPollFunc) -> Int32 {
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
        return ready
    }

    /// The run in progress, or a new one when the last ended.
    private func currentRun() -> any HostDrivenRun {
        if let run { return run }
        let run = beginRun()
        self.run = run
        watch(run.descriptor)
        return run
    }

    /// Milliseconds from `now` to `deadline` (GLib's monotonic microseconds), rounded up; 0 when
    /// it has passed.
    private static func milliseconds(until deadline: Int64, now: Int64) -> Int32 {
        deadline <= now ? 0 : Int32(clamping: (deadline - now + 999) / 1000)
    }

    private static func microseconds(roundingUp duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        if overflow { return .max }
        let fraction = (attoseconds + 999_999_999_999) / 1_000_000_000_000
        return whole.addingReportingOverflow(fraction).overflow ? .max : whole + fraction
    }
}
