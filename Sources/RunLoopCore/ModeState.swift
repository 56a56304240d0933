import CRunLoopShims
import PThreads
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reserved epoll tokens; items use their `ItemCore.id` (≥ 16).
enum WaitToken {
    static let wake: UInt64 = 0
    static let timer: UInt64 = 1
    static let async: UInt64 = 2
}

/// One mode of one loop (CF's `__CFRunLoopMode`): its items, its stop flag, its timer
/// deadline and the epoll set a run in this mode waits on.
///
/// The epoll set holds the loop's wake eventfd, the mode's timer descriptor and every port and
/// fd source of the mode; once the mode has been run as a common mode it also holds the async
/// queue's descriptor, taken out only for runs that must not service the queue (L1). On a real
/// clock the timer descriptor is a timerfd armed at the mode's deadline (T3); on a virtual
/// clock it is an eventfd poked when the deadline changes during a wait, so the waiter can
/// recompute how far to jump.
final class ModeState: Sendable {
    let mode: Loop.Mode
    /// Unique for the process's lifetime: items name the modes holding them by it.
    let id = ProcessCounters.itemID()
    /// OR of every activity ever observed in this mode; never cleared (O3). It decides only what
    /// an event sink is told: an activity observed once is still notified to it. Atomic so the
    /// pass can test it without the lock.
    let observerMask = Atomic<UInt32>(0)
    /// OR of the activities of the observers the mode holds now: widened as one joins,
    /// recomputed as one leaves (under the loop's lock). It decides whether a pass looks for
    /// observers to call, so a mode whose observers are gone costs a pass nothing again.
    let liveObserverMask = Atomic<UInt32>(0)
    /// Mirror of `!signalled.isEmpty`, written under `signalLock`, so a pass with no signalled
    /// source0 takes no lock.
    let hasSignalled = Atomic<Bool>(false)
    /// Guards `signalled` and the `queued`/`active` flags of the mode's source0 registrations.
    /// A leaf lock: taken with the loop's lock and a source's lock held, never the reverse.
    let signalLock = PThreadMutex()
    /// The registrations of this mode's sources0 that were signalled and not yet found
    /// performed, each once: the pass looks at these, not at every source of the mode (S2).
    /// `nonisolated(unsafe)`, `@exclusivity(unchecked)`: only with `signalLock` held, which
    /// serialises access.
    @exclusivity(unchecked) nonisolated(unsafe) var signalled: [Source0Registration] = []
    /// Bumped under the loop's lock with every change of `observers` (`observersChanged`), so
    /// a notification whose snapshot is still current skips the lock (see `doObservers`).
    /// Starts at 1: a run frame's 0 means it holds no snapshot.
    let observersVersion = Atomic<UInt64>(1)

    /// The mode's items and flags: reached only through the owning loop's `LoopLock.Held`
    /// (`held[mode]`).
    /// `nonisolated(unsafe)`: the pointer is followed only with the loop's lock held.
    nonisolated(unsafe) let guardedStorage = LockGuardedStorage(ModeGuardedState())

    let epollFD: Descriptor
    let timerFD: Descriptor
    /// The loop's wake-up descriptor (owned by the loop), for `rearm`'s fallback.
    let wakeFD: Descriptor
    let virtualClock: Bool

    private init(mode: Loop.Mode, epollFD: Descriptor, timerFD: Descriptor, wakeFD: Descriptor, virtualClock: Bool) {
        self.mode = mode
        self.virtualClock = virtualClock
        self.epollFD = epollFD
        self.timerFD = timerFD
        self.wakeFD = wakeFD
    }

    /// A new mode with its wait set and timer descriptor, or the failure that left none of them
    /// open: the process is out of descriptors or memory. Made under the loop's lock, so each
    /// failure is deferred to the lock's release.
    static func make(mode: Loop.Mode, wakeFD: Descriptor, virtualClock: Bool,
                     _ held: borrowing LoopLock.Held) -> Result<ModeState, SystemCallError> {
        let what = "the wait set of mode '\(mode)'"
        let timerWhat = "the timer descriptor of mode '\(mode)'"
        let epollFD: Descriptor
        switch makeDescriptor("epoll_create1", for: what, { rlk_epoll_create() }).deferred(held) {
        case .success(let fd): epollFD = fd
        case .failure(let failure): return .failure(failure)
        }
        let timerFD: Descriptor
        switch virtualClock
            ? makeDescriptor("eventfd", for: timerWhat, { rlk_eventfd_create() }).deferred(held)
            : makeDescriptor("timerfd_create", for: timerWhat, { rlk_timerfd_create() }).deferred(held) {
        case .success(let fd): timerFD = fd
        case .failure(let failure):
            closing(epollFD.raw, what).deferred(held)
            return .failure(failure)
        }
        // The wake-up descriptor is edge-triggered: each write reports one event to each set
        // that holds it, so the loop never reads it (one system call fewer per wake-up from
        // another thread). Its counter only grows, by one per write; 2^64 writes are out of
        // reach. An event left in another mode's set is dropped there as stale (see `wait`).
        for (fd, token, edge) in [(wakeFD, WaitToken.wake, Int32(1)), (timerFD, WaitToken.timer, Int32(0))] {
            if case .failure(let failure) = valueOrErrno("epoll_ctl(ADD)", { rlk_epoll_add(epollFD.raw, fd.raw, 1, token, edge) }) {
                held.deferReport(failure.creationDiagnostic(what))
                closing(epollFD.raw, what).deferred(held)
                closing(timerFD.raw, timerWhat).deferred(held)
                return .failure(failure)
            }
        }
        return .success(ModeState(mode: mode, epollFD: epollFD, timerFD: timerFD, wakeFD: wakeFD, virtualClock: virtualClock))
    }

    deinit {
        // A loop dropped without tear-down: its sources0 must not reach this mode any more
        // (`Source0Registration.mode` is unretained). Nobody holds the loop's lock for a mode
        // that is going away.
        for source in guardedStorage.unshared.pointee.sources0 { source.unregister(from: self) }
        guardedStorage.free()
    }

    /// Closes the mode's descriptors (its loop's teardown, or a loop released without one);
    /// each failure goes to `route`, which reports it or defers it to the lock's release.
    func closeDescriptors(_ route: (Unreported<Void>) -> Void) {
        route(closing(epollFD.raw, "the wait set of mode '\(mode)'"))
        route(closing(timerFD.raw, "the timer descriptor of mode '\(mode)'"))
    }

    /// Call after every change of `observers`. Dropping the mode's snapshot here frees no
    /// observer under the lock: a removed observer is held by whoever removes it. A run holding
    /// the snapshot keeps it, and no longer hands it back (`takeBack`).
    func observersChanged(_ held: borrowing LoopLock.Held) {
        held[self].observerSnapshot = nil
        held[self].lentObserverSnapshot = nil
        observersVersion.wrappingAdd(1, ordering: .releasing)
    }

    /// The current snapshot of the mode's observers for a run that starts or refreshes (nil
    /// when the mode has none). The first run to ask takes the mode's own reference, moved,
    /// and the mode marks the snapshot lent; a run nested in it gets a reference of its own.
    /// Moving instead of copying saves every run with observers an atomic retain and release
    /// (7% of the samples of a re-armed timer's run with two observers, `perf record`).
    @inline(__always)
    func lendObserverSnapshot(_ held: borrowing LoopLock.Held) -> ObserverSnapshot? {
        if let lent = held[self].lentObserverSnapshot { return lent.takeUnretainedValue() }
        guard let snapshot = held[self].observerSnapshot.take() ?? buildObserverSnapshot(held) else { return nil }
        held[self].lentObserverSnapshot = Unmanaged.passUnretained(snapshot)
        return snapshot
    }

    /// A run's snapshot as the run ends: the mode's own again when it is the one the mode lent
    /// and the observers have not changed since (nil returned); otherwise returned, for the
    /// caller to release after the lock (it may hold the last reference to a removed observer).
    @inline(__always)
    func takeBack(_ snapshot: consuming ObserverSnapshot?, _ held: borrowing LoopLock.Held) -> ObserverSnapshot? {
        guard let returned = snapshot, let lent = held[self].lentObserverSnapshot,
              lent.toOpaque() == Unmanaged.passUnretained(returned).toOpaque() else { return snapshot }
        held[self].lentObserverSnapshot = nil
        held[self].observerSnapshot = returned
        return nil
    }

    @inline(never)
    private func buildObserverSnapshot(_ held: borrowing LoopLock.Held) -> ObserverSnapshot? {
        guard !held[self].observers.isEmpty else { return nil }
        return ObserverSnapshot(observers: held[self].observers)
    }

    /// Re-arms the timer descriptor (T3) — called with the loop's lock held whenever a timer
    /// joins, leaves, moves, starts or stops firing. `waiting` says the loop may be blocked
    /// in a wait right now (`Loop.sleeping`): then a real timerfd is written at once (so a timer
    /// added or moved by another thread wakes the wait on time) and a virtual waiter is told to
    /// recompute its jump. Otherwise the deadline is only marked stale: its next reader
    /// (`armedDeadline`) computes it, and the loop thread writes the timerfd before its next
    /// wait (`syncTimerFD`). Firing a repeating timer moves the deadline twice (the timer stops
    /// being eligible while it fires, then gets its next date), and a polling pass never reads
    /// the descriptor at all, so most changes need neither a system call nor a computation.
    ///
    /// Tolerance (T8, Darwin semantics): `hard` is the earliest fire date + effective tolerance;
    /// the wake is deferred from the earliest fire date to the LATEST fire date that is still
    /// ≤ `hard`, so timers within each other's tolerance fire in one pass, and a lone timer
    /// is never delayed for nothing.
    ///
    /// A system call (made only when `waiting`) that fails is deferred to the lock's release: a
    /// caller that may pass `waiting` true releases the lock with `unlockReporting()`.
    func rearm(waiting: Bool, _ held: borrowing LoopLock.Held) {
        // Nobody waits on the set: the deadline is computed when it is next read (the pass's
        // poll, the start of a wait), so a timer that stops being eligible as it fires and then
        // moves costs one computation, not two. A waiting loop read it before it blocked, so
        // it is never stale here when `waiting`.
        guard waiting else {
            held[self].deadlineStale = true
            return
        }
        let wake = held[self].timers.wakeDeadline()
        held[self].deadlineStale = false
        guard wake != held[self].computedDeadline else { return }
        held[self].computedDeadline = wake
        let told: Bool
        if virtualClock {
            told = valueOrErrno("write(eventfd)") { rlk_eventfd_signal(timerFD.raw) }
                .deferringFailure(.systemCallFailed, "telling a virtual wait in mode '\(mode)' that its deadline moved", held) != nil
        } else {
            told = syncTimerFD(held)
        }
        // The waiter did not learn of the new deadline: a wake-up makes it compute its wait again
        // (a wake-up for no run is dropped by `wait` as stale). The loop is waiting, so its
        // wake-up descriptor is open.
        if !told {
            valueOrErrno("write(eventfd)") { rlk_eventfd_signal(wakeFD.raw) }
                .deferringFailure(.systemCallFailed, "waking mode '\(mode)' after its timer descriptor failed", held)
        }
    }

    /// Real clock: arms the timerfd at `armedDeadline` unless it already is. The loop thread
    /// calls it when it starts a wait on this set, other threads through `rearm`
    /// while it waits, so the descriptor is right whenever somebody blocks on it. Re-arming
    /// also resets an expired, unread timerfd, so it never wakes a wait for a deadline that
    /// no longer exists (no L-g); one left expired at an unchanged deadline belongs to a timer
    /// that is due anyway.
    /// Returns false when arming failed (deferred to the lock's release, so the caller releases
    /// it with `unlockReporting()`; the next call tries again).
    @inline(__always) @discardableResult
    func syncTimerFD(_ held: borrowing LoopLock.Held) -> Bool {
        guard !virtualClock else { return true }
        let deadline = armedDeadline(held)
        guard held[self].kernelDeadline != deadline else { return true }
        guard valueOrErrno("timerfd_settime", {
            rlk_timerfd_arm(timerFD.raw, deadline == .max ? 0 : max(deadline, 1))
        }).deferringFailure(.systemCallFailed, "arming the timer descriptor of mode '\(mode)'", held) != nil else { return false }
        held[self].kernelDeadline = deadline
        return true
    }

    /// When the mode's timer descriptor fires (`.max` = disarmed; T3, T8), recomputed first
    /// when a change left it stale (`rearm`).
    @inline(__always)
    func armedDeadline(_ held: borrowing LoopLock.Held) -> UInt64 {
        if held[self].deadlineStale {
            held[self].deadlineStale = false
            held[self].computedDeadline = held[self].timers.wakeDeadline()
        }
        return held[self].computedDeadline
    }
}

/// A mode's mutable state: reached only through the owning loop's `LoopLock.Held`.
struct ModeGuardedState {
    /// `stop(mode:)` is sticky until a run of this mode consumes it (W2).
    var stopped = false
    /// The epoll set failed in a wait (not EINTR): the mode counts as empty from then on, so
    /// runs of it return `.finished` instead of failing again on every pass.
    var waitFailed = false
    /// Whether the mode is one of the loop's common modes (cached from `commonModeNames`).
    var isCommon = false
    var sources0: [LoopSource] = []
    var ports: [UInt64: LoopPortSource] = [:]
    var files: [UInt64: LoopFileSource] = [:]
    /// Sorted by `order`, ties in insertion order (O1).
    var observers: [LoopObserver] = []
    /// `observers` per activity, shared by the mode's runs until they change (see
    /// `ObserverSnapshot`); nil until a run needs it, and while it is lent.
    var observerSnapshot: ObserverSnapshot?
    /// The current snapshot while a run holds the mode's reference to it (`lendObserverSnapshot`);
    /// that run hands it back at its end unless the observers changed meanwhile.
    var lentObserverSnapshot: Unmanaged<ObserverSnapshot>?
    /// Ordered by fire date, ties in insertion order (T2); see `TimerQueue`.
    var timers = TimerQueue()
    /// Passes of the mode between collecting their due timers and their end (a run nested in
    /// a timer's callout adds its own). While there is one, the due lists borrow timers from
    /// `timers`, so a timer the mode drops is kept in `parkedTimers` until the last ends.
    var timerPasses = 0
    var parkedTimers: [LoopTimer] = []
    /// When the mode's timer descriptor fires (`.max` = disarmed), as last computed: read it
    /// as `ModeState.armedDeadline`, which first recomputes it when it is stale (T3, T8).
    var computedDeadline: UInt64 = .max
    /// A timer joined, left, moved, started or stopped firing since `computedDeadline` was
    /// computed, while nobody waited on the set (see `ModeState.rearm`).
    var deadlineStale = false
    /// The async queue's descriptor while it is in `epollFD` (L1, see `Loop.asyncPortForRun`).
    var asyncInSet: Descriptor?
    /// Real clock: the deadline the timerfd is actually armed at (`.max` = disarmed). It
    /// lags `armedDeadline` while nobody waits on the set; see `rearm` and `syncTimerFD`.
    var kernelDeadline: UInt64 = .max

    var isEmptyOfItems: Bool {
        sources0.isEmpty && ports.isEmpty && files.isEmpty && timers.isEmpty
    }

    /// Inserts `observer` after the last observer with `order <= observer.order` (O1).
    mutating func insertSorted(_ observer: LoopObserver) {
        var index = observers.count
        while index > 0 && observers[index - 1].order > observer.order { index -= 1 }
        observers.insert(observer, at: index)
    }
}
