// Where a run does less work than CF's code while keeping CF's observable order: each shortcut
// is one function here, with what it saves and the tests that hold it to CF's behaviour.
// Savings: callgrind, instructions per polling run (a `perform` and `run(timeout: 0)`) of
// Benchmarks/Scripts/loop-pass-callgrind.sh's driver, with the shortcut turned off against on
// (2026-11-26). Nothing else in the pass takes a shortcut.

extension Loop {
    /// The Entry shortcut. CF does L0 (a stop before the first pass) and L1 (does the run
    /// service the async queue) after the Entry observers, under the lock taken again. Here
    /// they are decided in the run's first critical section, before the Entry callouts, and
    /// kept unless something that could change them happened meanwhile: a stop, a new common
    /// mode or the teardown all move the control epoch (`controlChanged`). Saves a lock round
    /// trip per run that has Entry observers: 123 instructions (2,331 → 2,208 with 2 observers).
    /// Held equivalent by RunAndPassRuleTests "L0 a stop issued in an Entry observer ends the
    /// run before the first pass" and "L0 L1 are decided after Entry: an Entry observer that
    /// makes the mode common gets the async queue serviced in this run", and the differential
    /// suite's Entry observers.
    @inline(__always)
    func settleBeforeEntry(_ run: RunContext, _ held: borrowing LoopLock.Held) -> SettledStart {
        let epoch = mirrors.epoch
        let unstopped = !held[run.frame].stopped && !held[run.mode].stopped
        if unstopped { run.settings.pointee.asyncPort = asyncPortForRun(run, held) }
        return SettledStart(epoch: epoch, unstopped: unstopped)
    }

    /// The early block detach. CF takes the block queue at the first pass's B3 step, under a
    /// lock of its own. When nothing can run between the run's first critical section and that
    /// step (no BeforeTimers or BeforeSources observer, no event sink, no stale wake-up to
    /// drop), the queue is taken in that first critical section instead: a block queued by
    /// another thread meanwhile counts as queued after B3, as it could have been in CF. Saves a
    /// lock round trip per run: 57 instructions (1,575 → 1,518). Held equivalent by the B1–B3 tests of
    /// ItemRuleTests and the differential suite's blocks.
    @inline(__always)
    func detachFirstBlocksEarly(_ run: RunContext, _ held: borrowing LoopLock.Held) -> EarlyBlocks {
        let notified = Loop.Activity.beforeTimers.rawValue | Loop.Activity.beforeSources.rawValue
        guard !wakeUpFlags.isPending && !hasSink && run.mode.liveObserverMask.load(ordering: .relaxed) & notified == 0 else {
            return .notDetached
        }
        guard detachBlocks(into: &run.frame.scratch.pointee.blocks, held) else { return .detached(isCommon: nil) }
        return .detached(isCommon: held[run.mode].isCommon)
    }

    /// The empty first top. When the early detach found no block and no source0 is signalled,
    /// the top of the run's first pass has nothing to do: no BeforeTimers or BeforeSources
    /// observer, no sink, no stale wake-up (the detach's conditions), no block, no source0. If
    /// no BeforeWaiting observer runs before the wait either, the run's first critical section
    /// goes on into the wait's instead of releasing the lock and taking it again: another
    /// thread's work that would have come between the two counts as coming before the first
    /// or after the second, as it could have in CF, and the run reads the queues, the flags and
    /// the timers of its wait under the lock as before. Saves a lock round trip per run whose
    /// first pass fires a timer or finds nothing: 118 instructions (1,897 → 1,779, the re-armed
    /// due timer, 2026-11-27); the check costs the runs that do not take it 8–12. Held
    /// equivalent by RunAndPassRuleTests "L-b a due timer fires only after the (polling) wait,
    /// never at BeforeTimers", the TimerRules tests and the differential suite's timer runs,
    /// which begin this way.
    @inline(__always)
    func firstTopIsEmpty(_ run: RunContext, _ firstBlocks: EarlyBlocks) -> Bool {
        guard case .detached(isCommon: nil) = firstBlocks else { return false }
        return run.mode.liveObserverMask.load(ordering: .relaxed) & Loop.Activity.beforeWaiting.rawValue == 0
            && !run.mode.hasSignalled.load(ordering: .acquiring)
    }

    /// B3 of a run's first pass: the blocks detached early, or the usual step.
    @inline(__always)
    func runFirstBlocks(_ run: RunContext, _ firstBlocks: inout EarlyBlocks) {
        switch firstBlocks {
        case .detached(let isCommon):
            firstBlocks = .notDetached
            if let isCommon { runDetachedBlocks(run, isCommon: isCommon) }
        case .notDetached:
            doBlocks(run)
        }
    }

    /// The quiet poll. CF's polling wait is an `epoll_wait` with a zero timeout. When nothing in
    /// the mode's wait set can be ready (`isQuiet`), the poll is decided inside the critical
    /// section that precedes it: a noted wake-up or a due timer is what it finds, and no other
    /// thread can tell this from a real poll (W4: `isWaiting` is never seen true for it).
    /// Saves the `epoll_wait` system call and a lock round trip per polling pass: 231
    /// instructions in user space (1,749 → 1,518), and the kernel's share of the call.
    /// Held equivalent by RunAndPassRuleTests "L-a BW/AW are skipped when polling" and "L-b a
    /// due timer fires only after the (polling) wait", and the differential suite's polls.
    @inline(__always)
    func pollQuietly(_ run: RunContext, _ plan: WaitPlan, _ held: borrowing LoopLock.Held) -> Cause {
        var cause = Cause(.none)
        if takeNotedWakeUp(for: held[run.frame].serial, held) == true { cause = Cause(.wake) }
        if plan.armed != .max, let time = timerPassTime(ifDue: plan.armed) { cause = Cause(.timer, timerTime: time) }
        return cause
    }
}

extension Loop.Mode {
    /// `self == .common` (R1, M3), answered without comparing strings for the default mode.
    /// Both names have 21 characters, so `==` would compare their bytes on every run of the
    /// default mode; a default-mode run is never a run of `.common`. Saves 132 instructions per
    /// default-mode run (1,650 → 1,518). Held by RunAndPassRuleTests' R1 test.
    @inline(__always)
    var isCommonModes: Bool { self != .default && self == .common }
}

/// L0 and L1 as the Entry shortcut settled them before the Entry callouts.
struct SettledStart {
    let epoch: UInt64
    let unstopped: Bool

    /// Still valid after the callouts: no stop, and nothing moved the control epoch.
    @inline(__always)
    func stillHolds(after loop: Loop) -> Bool { unstopped && loop.mirrors.epoch == epoch }
}

/// The first pass's B3 step of a run: still to take the block queue, or already detached in
/// L1's critical section (`isCommon` nil: no block was queued).
enum EarlyBlocks {
    case notDetached
    case detached(isCommon: Bool?)
}
