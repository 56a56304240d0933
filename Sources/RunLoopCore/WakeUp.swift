import CRunLoopShims
import RunLoopDiagnostics
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The wake-up protocol: whether a wake-up writes the loop's wake-up descriptor, and whether a
// wait ends for it. Models/wakeup.pml is this file as a model checked by spin; change the two
// together (Models/check runs in CI).
//
// The wake-up descriptor is an eventfd in every mode's wait set, edge-triggered and never read:
// a write is one event in each set, and a wait that takes the event has taken the wake-up.
// - W3: while the innermost run ignores wake-ups (from a wake to the end of that pass, and
//   whenever the loop is not running) a wake-up does nothing: that run looks at its queues
//   before it sleeps again. The flag is read and written only under the lock (issue 26).
// - W3's second window, ours: from a pass's first source0 perform to the end of that pass, a
//   wake-up from another thread does nothing either, as the pass only polls and the next pass
//   looks at every queue before any wait that could block. Its flag (`pollingPass`) is set by
//   the loop's thread without the lock, only from false to true, and read and cleared with the
//   lock held, in the critical section of the pass's exit checks. A producer that reads it set
//   therefore decided before that section, its work queued before it decided, and the next
//   pass looks at the queues after that section; one that reads it unset only writes a wake-up
//   the poll takes. (Cleared outside the lock instead, it would be issue 26 again.)
// - A wake-up on the loop's own thread is noted, not written: that thread is not waiting, and
//   its next wait takes the note before it would block. While one is noted, other threads'
//   wake-ups add nothing (the same wait takes them).
// - A written wake-up names the run it was for (its serial). One that lands after that run
//   ended is stale: the pass drops it, and the wait that takes its event waits on (L-g: no
//   wake-up with nothing to do).

/// What the wake-up protocol keeps under the loop's lock.
struct WakeUpState {
    /// CF's `_wakeUpPort`.
    var descriptor: Descriptor?
    /// The run (`RunControl.serial`) the pending wake-up is for.
    var serial: UInt64 = 0
}

/// The wake-up protocol's flags, readable without the lock, written only in this file (with
/// the lock held, except `writesInFlight`, which counts writes made after it is released).
struct WakeUpFlags: ~Copyable {
    /// A wake-up is pending: written (its event is in the sets or on its way) or noted.
    fileprivate let pending = Atomic<Bool>(false)
    /// The pending wake-up was noted on the loop's own thread: nothing was written.
    fileprivate let noted = Atomic<Bool>(false)
    /// A write of the wake-up descriptor failed (reported): the next wait does not sleep.
    fileprivate let lost = Atomic<Bool>(false)
    /// Writes decided under the lock and not yet made; teardown waits for them before it
    /// closes the descriptor, which a late write could otherwise hit after its number is reused.
    fileprivate let writesInFlight = Atomic<Int>(0)

    var isPending: Bool { pending.load(ordering: .acquiring) }
    var isNoted: Bool { noted.load(ordering: .acquiring) }
    var isLost: Bool { lost.load(ordering: .relaxed) }
    var hasWritesInFlight: Bool { writesInFlight.load(ordering: .acquiring) != 0 }
}

/// A wake-up decided under the lock, to be written once it is released (`Loop.write`).
struct WakeUpWrite {
    let descriptor: Descriptor
}

extension Loop {
    /// Wakes the loop if it is waiting, or makes its next wait return at once (W3). Any thread.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// loop.perform { print("runs after the wake-up") }
    /// loop.wakeUp()
    /// ```
    public func wakeUp() {
        if InputReporting.isActive { reportInput(.wakeUp, label: "") }
        // The decision is made under the lock; the eventfd write comes after it. Written under
        // the lock, the write would wake the loop thread, which on the same CPU preempts this
        // thread and at once blocks on the lock this thread still holds: two extra context
        // switches per wake-up.
        write(lock.withLock { decideWakeUp($0) })
    }

    /// W3's decision for a wake-up: nothing when the loop is torn down or its innermost run
    /// ignores wake-ups; otherwise recorded for the innermost run, and the write to make once
    /// the lock is released, if one is needed.
    @inline(__always)
    func decideWakeUp(_ held: borrowing LoopLock.Held) -> WakeUpWrite? {
        let innermost = held.loop.innermostFrame
        guard !held.loop.tornDown, !held[innermost].ignoresWakeUps else { return nil }
        // The second window: not in a hosted run, whose thread the host may block on before the
        // loop looks again (H3).
        if innermost.isPollingPass(held) && !held[innermost].isHosted { return nil }
        held.loop.wakeUp.serial = held[innermost].serial
        if wakeUpFlags.noted.load(ordering: .relaxed) { return nil }   // the noted one's wait takes it
        if isOwnerThread && !held[innermost].isHosted {
            // Not waiting: note it for the next wait, unless a written one is already pending
            // (its event ends that wait anyway). A hosted run's thread belongs to its host,
            // which may block before the loop looks again: there, it is written.
            if !wakeUpFlags.pending.load(ordering: .relaxed) {
                wakeUpFlags.pending.store(true, ordering: .releasing)
                wakeUpFlags.noted.store(true, ordering: .releasing)
            }
            return nil
        }
        guard let descriptor = held.loop.wakeUp.descriptor else { return nil }
        wakeUpFlags.pending.store(true, ordering: .releasing)
        wakeUpFlags.writesInFlight.wrappingAdd(1, ordering: .relaxed)
        return WakeUpWrite(descriptor: descriptor)
    }

    /// Makes the write `decideWakeUp` asked for. A failed write is reported, and the next wait
    /// then returns at once instead of sleeping through it (`takeLostWakeUp`). Lock not held.
    @inline(__always)
    func write(_ wakeUp: WakeUpWrite?) {
        guard let wakeUp else { return }
        if valueOrErrno("write(eventfd)", { rlk_eventfd_signal(wakeUp.descriptor.raw) })
            .reportingFailure(.systemCallFailed, "waking the loop (its next wait polls instead)") == nil {
            wakeUpFlags.lost.store(true, ordering: .releasing)
        }
        wakeUpFlags.writesInFlight.wrappingSubtract(1, ordering: .releasing)
    }

    // MARK: The loop's side

    /// L-g at the top of a pass: a wake-up still pending here that was for another run (a
    /// nested run, or an earlier run that ended without waiting) is stale and dropped, with its
    /// note if it was noted. A written one leaves an event in the sets: the next wait takes it
    /// and drops it as stale too. This run's own pending wake-up stays: it can only come from
    /// its Entry observers or from after its last wake, since W3 ignored those in between.
    @inline(__always)
    func dropStaleWakeUp(_ run: RunContext) {
        guard wakeUpFlags.isPending else { return }
        let held = lock.lock()
        if wakeUpFlags.pending.load(ordering: .relaxed) && held.loop.wakeUp.serial != held[run.frame].serial {
            wakeUpFlags.noted.store(false, ordering: .relaxed)
            wakeUpFlags.pending.store(false, ordering: .releasing)
        }
        held.unlock()
    }

    /// Whether a written wake-up is pending: its event is (or will be) in the wait set, so a
    /// wait must look at the set instead of deciding it is quiet.
    @inline(__always)
    func hasWrittenWakeUpPending(_ held: borrowing LoopLock.Held) -> Bool {
        wakeUpFlags.pending.load(ordering: .relaxed) && !wakeUpFlags.noted.load(ordering: .relaxed)
    }

    /// Takes the wake-up noted on this thread, if any: nil when none is noted, else whether it
    /// is for the run `serial` (one noted for an earlier run is stale and dropped, as a stale
    /// write is).
    @inline(__always)
    func takeNotedWakeUp(for serial: UInt64, _ held: borrowing LoopLock.Held) -> Bool? {
        guard wakeUpFlags.noted.load(ordering: .relaxed) else { return nil }
        wakeUpFlags.noted.store(false, ordering: .relaxed)
        wakeUpFlags.pending.store(false, ordering: .releasing)
        return held.loop.wakeUp.serial == serial
    }

    /// A wait took the wake-up descriptor's event (edge-triggered: it will not be reported
    /// again): the pending wake-up is taken. Whether it was for the run `serial` (else stale).
    @inline(__always)
    func takeWakeUpEvent(for serial: UInt64, _ held: borrowing LoopLock.Held) -> Bool {
        wakeUpFlags.pending.store(false, ordering: .releasing)
        return held.loop.wakeUp.serial == serial
    }

    /// Whether a wake-up whose write failed is for the run `serial`; consumes it either way,
    /// with the pending wake-up it stood for. A wait already blocked when the write failed
    /// sleeps until its next event.
    func takeLostWakeUp(for serial: UInt64) -> Bool {
        guard wakeUpFlags.isLost else { return false }
        return lock.withLock { held in
            guard wakeUpFlags.lost.exchange(false, ordering: .acquiringAndReleasing),
                  wakeUpFlags.pending.load(ordering: .relaxed) else { return false }
            wakeUpFlags.pending.store(false, ordering: .releasing)
            return held.loop.wakeUp.serial == serial
        }
    }

    /// Teardown: waits until no `wakeUp()` that decided before it is still writing the
    /// descriptor, so closing it cannot let a late write hit a reused descriptor number.
    func waitForWakeUpWrites() {
        while wakeUpFlags.hasWritesInFlight { sched_yield() }
    }

    // MARK: Reports

    /// One line with every piece of state that decides whether a producer writes the wake-up
    /// descriptor and whether the loop sleeps: what a report of a lost wake-up must show. Any
    /// thread; takes the loop's lock.
    package func wakeUpStateDescription() -> String {
        let (fields, descriptor) = lock.withLock { held -> (String, Descriptor?) in
            let frame = held.loop.innermostFrame
            let jobs = held.loop.queues.blocks.reduce(0) { $0 + ($1.job == nil ? 0 : 1) }
            let text = "sleeping=\(held.loop.sleeping) depth=\(held.loop.depth) run=\(held[frame].serial)"
                + " ignoreWakeUps=\(held[frame].ignoresWakeUps) pollingPass=\(frame.isPollingPass(held))"
                + " wakePending=\(wakeUpFlags.isPending)"
                + " wakeNoted=\(wakeUpFlags.isNoted) wakeSerial=\(held.loop.wakeUp.serial)"
                + " wakeUpLost=\(wakeUpFlags.isLost) writesInFlight=\(wakeUpFlags.hasWritesInFlight)"
                + " jobs=\(jobs) blocks=\(held.loop.queues.blocks.count - jobs)"
                + " hasBlocks=\(mirrors.hasBlocks) asyncPending=\(held.loop.queues.asyncWork.count)"
            return (text, held.loop.wakeUp.descriptor)
        }
        return fields + " wakeEventfdCount=\(descriptor.flatMap(Loop.eventfdCount).map(String.init) ?? "?")"
            + " loopThread=\(Loop.threadState(ownerTID) ?? "?")"
    }

    /// The kernel's view of thread `tid` of this process: its state letter and where it waits
    /// ("S ep_poll": blocked in `epoll_wait`; "R": runnable, waiting for a CPU). A lost wake-up
    /// leaves the loop's thread blocked; a starved one is runnable. Nil when /proc does not say.
    static func threadState(_ tid: Int64) -> String? {
        guard let stat = procLines("/proc/self/task/\(tid)/stat")?.first,
              let close = stat.lastIndex(of: ")") else { return nil }
        // The state follows the command name, which is in parentheses and may hold spaces.
        let state = stat[stat.index(after: close)...].split(separator: " ").first.map(String.init) ?? "?"
        let channel = procLines("/proc/self/task/\(tid)/wchan")?.first ?? ""
        return channel.isEmpty || channel == "0" ? state : "\(state) \(channel)"
    }

    /// The lines of a small /proc file, without their newlines; nil when it cannot be opened.
    private static func procLines(_ path: String) -> [String]? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var lines: [String] = []
        var buffer = [CChar](repeating: 0, count: 512)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            lines.append(String(decoding: buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return lines
    }

    /// A wake-up was decided under the lock and its write is not yet made: its thread has not
    /// run since. The stress's watchdog tells such a late write from a lost wake-up by it.
    package var hasWakeUpWritesInFlight: Bool { wakeUpFlags.hasWritesInFlight }

    /// The loop's thread is runnable, waiting for a CPU (kernel state R), not blocked in its
    /// wait: a lost wake-up leaves it blocked. The stress's watchdog tells starvation by it.
    package var isLoopThreadRunnable: Bool { Loop.threadState(ownerTID)?.hasPrefix("R") == true }

    /// How many times the wake-up descriptor has been written (it is never read); nil when the
    /// kernel does not say.
    package var wakeUpWriteCount: UInt64? {
        lock.withLock { $0.loop.wakeUp.descriptor }.flatMap(Loop.eventfdCount)
    }

    /// The counter of an eventfd as the kernel shows it in /proc/self/fdinfo.
    static func eventfdCount(_ descriptor: Descriptor) -> UInt64? {
        guard let line = procLines("/proc/self/fdinfo/\(descriptor.raw)")?.first(where: { $0.hasPrefix("eventfd-count:") })
        else { return nil }
        let digits = line.dropFirst("eventfd-count:".count).filter { !$0.isWhitespace }
        return UInt64(digits, radix: 16) ?? UInt64(digits)
    }

    /// Tests: the record a `wakeUp()` decided for the last run leaves when its write lands only
    /// after that run ended (the write itself is `forceWakeUpWrite`).
    package func recordWakeUpForLastRun() {
        lock.withLock { held in
            held.loop.wakeUp.serial = held.loop.runSerial
            wakeUpFlags.pending.store(false, ordering: .releasing)
        }
    }

    /// Writes the wake-up descriptor directly, as a debugger would: the lost-wake-up stress
    /// rescues a stalled loop with it (after reporting the state).
    package func forceWakeUpWrite() {
        guard let descriptor = lock.withLock({ $0.loop.wakeUp.descriptor }) else { return }
        valueOrErrno("write(eventfd)") { rlk_eventfd_signal(descriptor.raw) }
            .reportingFailure(.systemCallFailed, "forcing a wake-up write")
    }
}

// MARK: W3's second window

extension RunFrameHandle {
    /// The pass performed a source0: its wait only polls. Loop thread, without the lock (the
    /// top of this file says why that is safe, and why clearing is not).
    @inline(__always)
    func markPollingPass() { pollingPass.pointee.store(true, ordering: .relaxed) }

    /// The window is open. With the lock held.
    @inline(__always)
    func isPollingPass(_ held: borrowing LoopLock.Held) -> Bool { pollingPass.pointee.load(ordering: .relaxed) }

    /// Closes the window: a run's start, the critical section of a pass's exit checks. With the
    /// lock held.
    @inline(__always)
    func endPollingPass(_ held: borrowing LoopLock.Held) { pollingPass.pointee.store(false, ordering: .relaxed) }
}

// MARK: The debug-build lost-wake-up detector

extension Loop {
    /// Debug builds: the longest a wait sleeps before it looks for announced work that is
    /// waiting (`LostWakeUpCheck`). Tests shorten it.
    package static var lostWakeUpBound: Duration {
        get { .nanoseconds(lostWakeUpBoundNanoseconds.load(ordering: .relaxed)) }
        set { lostWakeUpBoundNanoseconds.store(Int64(Nanoseconds.from(newValue)), ordering: .relaxed) }
    }
    private static let lostWakeUpBoundNanoseconds = Atomic<Int64>(1_000_000_000)

    /// Announced work waiting while the run sleeps: a Swift Concurrency job for this mode,
    /// async work this run services, or a stop of this run. Each of these always comes with a
    /// wake-up, so finding one after a whole bound asleep means that wake-up was lost (issue
    /// 26). Blocks and sources0 do not wake the loop by themselves (B1, S1), so they are not
    /// counted. Reports `loop.lost-wake-up` with the wake-up state and ends the wait as woken.
    func lostWakeUpFound(_ run: RunContext) -> UnderLock<Cause>? {
        let waiting = lock.withLock { held -> String? in
            guard !wakeUpFlags.hasWritesInFlight else { return nil }   // its write is on its way
            let isCommon = held[run.mode].isCommon
            if held.loop.queues.blocks.contains(where: { $0.job != nil && $0.matches(Unmanaged.passUnretained(run.mode), run.mode.mode, isCommon: isCommon) }) {
                return "a Swift Concurrency job"
            }
            if !isMainLoop && run.asyncPort != nil && !held.loop.queues.asyncWork.isEmpty { return "submitted work" }
            if held[run.frame].stopped { return "a stop()" }
            return nil
        }
        guard let waiting else { return nil }
        Diagnostics.report(.error, .lostWakeUp,
                           "the loop slept \(Loop.lostWakeUpBound) in mode '\(run.mode.mode)' with \(waiting) waiting, announced by a wake-up it never received; woken now. Wake-up state: \(wakeUpStateDescription())")
        return UnderLock(held: lockAfterWait(), value: Cause(.wake))
    }
}

/// Debug builds: bounds a wait's sleep to `Loop.lostWakeUpBound`, and says when the bound, not
/// an event or the wait's own deadline, ended it. Release builds: nothing.
struct LostWakeUpCheck {
    #if DEBUG
    private var capped = false
    /// The last wait ended at the bound with nothing ready.
    private(set) var boundPassed = false

    mutating func bounded(_ timeout: Int64) -> Int64 {
        let bound = Int64(Nanoseconds.from(Loop.lostWakeUpBound))
        capped = timeout < 0 || timeout > bound
        return capped ? bound : timeout
    }

    mutating func waitEnded(readyCount: Int32) { boundPassed = capped && readyCount == 0 }
    #else
    // Mutating like the debug build's, so the caller's `var` reads the same in both builds.
    var boundPassed: Bool { false }
    @inline(__always) mutating func bounded(_ timeout: Int64) -> Int64 { timeout }
    @inline(__always) mutating func waitEnded(readyCount: Int32) {}
    #endif
}
