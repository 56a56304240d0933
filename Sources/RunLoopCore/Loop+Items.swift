import RunLoopDiagnostics
import CRunLoopShims

// Adding, removing and purging items (O1–O3, O6, S5, S6, T2, T6, T7, M3, M4): one generic path
// for every kind (see `ModeItem`), and thin public entry points per kind. Every entry point is
// thread-safe: it takes the loop's lock, and calls `schedule` / `cancel` callouts and reports
// diagnostics only after releasing it (S5).

extension Loop {
    // MARK: Public entry points

    /// Adds an observer to `mode`, or to every common mode for `.common` (M3). Adding it again
    /// changes nothing; an invalid observer or one of another loop is refused (O2).
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// let outcome = loop.add(LoopObserver(activities: .beforeWaiting) { _, _ in print("about to sleep") },
    ///                        mode: .common)
    /// assert(outcome == .added)
    /// ```
    @discardableResult
    public func add(_ observer: LoopObserver, mode: Loop.Mode) -> AddOutcome { addItem(observer, mode: mode) }

    /// Adds a source0 to `mode` (or every common mode), then calls its `schedule` callout once
    /// per concrete mode it joined, with the lock released (S5). A source0 may be in several loops.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// loop.add(LoopSource(label: "input") { print("input") }, mode: .default)
    /// ```
    @discardableResult
    public func add(_ source: LoopSource, mode: Loop.Mode) -> AddOutcome { addItem(source, mode: mode) }

    /// Adds a message port to `mode` (or every common mode). A port belongs to one loop.
    @discardableResult
    public func add(_ port: LoopPortSource, mode: Loop.Mode) -> AddOutcome { addItem(port, mode: mode) }

    /// Adds an fd source to `mode` (or every common mode). The kernel refuses a second source on
    /// the same fd in one mode (EEXIST), regular files (EPERM) and closed fds (EBADF): the outcome
    /// is then ``AddOutcome/refused(_:)`` with the failed call, and the source stays out of that mode.
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// var ends: [Int32] = [0, 0]
    /// _ = pipe(&ends)
    /// let outcome = loop.add(LoopFileSource(fd: ends[0], events: .readable) { _ in }, mode: .default)
    /// if case .refused(let reason) = outcome { print("not watched:", reason) }
    /// ```
    @discardableResult
    public func add(_ source: LoopFileSource, mode: Loop.Mode) -> AddOutcome { addItem(source, mode: mode) }

    /// Adds a timer to `mode` (or every common mode). A timer may be in several modes of one
    /// loop, never in two loops (T2). No wake-up is needed: the mode's timer descriptor is
    /// re-armed and wakes a sleeping run (T6).
    ///
    /// ```swift
    /// let loop = Loop(clock: VirtualClock())
    /// loop.add(try LoopTimer(after: .milliseconds(20), clock: loop.clock) { _ in print("fired") }, mode: .default)
    /// ```
    @discardableResult
    public func add(_ timer: LoopTimer, mode: Loop.Mode) -> AddOutcome { addItem(timer, mode: mode) }

    /// Removes an observer from `mode` (or from the common modes for `.common`, only if it was
    /// added as a common item, M3). Returns whether some mode held it.
    @discardableResult
    public func remove(_ observer: LoopObserver, mode: Loop.Mode) -> Bool { removeItem(observer, mode: mode) }

    /// Removes a source0 from `mode` (or the common modes) and calls `cancel` per mode left (S5).
    @discardableResult
    public func remove(_ source: LoopSource, mode: Loop.Mode) -> Bool { removeItem(source, mode: mode) }

    /// Removes a port from `mode` (or the common modes). Pending messages stay queued.
    @discardableResult
    public func remove(_ port: LoopPortSource, mode: Loop.Mode) -> Bool { removeItem(port, mode: mode) }

    /// Removes an fd source from `mode` (or the common modes). The fd itself is not touched.
    @discardableResult
    public func remove(_ source: LoopFileSource, mode: Loop.Mode) -> Bool { removeItem(source, mode: mode) }

    /// Removes a timer from `mode` (or the common modes); it stays valid (T2).
    @discardableResult
    public func remove(_ timer: LoopTimer, mode: Loop.Mode) -> Bool { removeItem(timer, mode: mode) }

    /// Whether `mode` holds the observer (for `.common`: whether it is a common item).
    public func contains(_ observer: LoopObserver, mode: Loop.Mode) -> Bool { containsItem(observer, mode: mode) }
    /// Whether `mode` holds the source0 (for `.common`: whether it is a common item).
    public func contains(_ source: LoopSource, mode: Loop.Mode) -> Bool { containsItem(source, mode: mode) }
    /// Whether `mode` holds the port (for `.common`: whether it is a common item).
    public func contains(_ port: LoopPortSource, mode: Loop.Mode) -> Bool { containsItem(port, mode: mode) }
    /// Whether `mode` holds the fd source (for `.common`: whether it is a common item).
    public func contains(_ source: LoopFileSource, mode: Loop.Mode) -> Bool { containsItem(source, mode: mode) }
    /// Whether `mode` holds the timer (for `.common`: whether it is a common item).
    public func contains(_ timer: LoopTimer, mode: Loop.Mode) -> Bool { containsItem(timer, mode: mode) }

    /// The observers of `mode` in call order (O1). Empty for a missing mode or `.common`.
    public func observers(in mode: Loop.Mode) -> [LoopObserver] {
        lock.withLock { held in held.loop.modes[mode].map { held[$0].observers } ?? [] }
    }

    /// The next fire date of the first timer of `mode` (T9); nil when it has none.
    public func nextTimerFireDate(in mode: Loop.Mode) -> LoopInstant? {
        lock.withLock { held in
            guard let state = held.loop.modes[mode], let first = held[state].timers.first else { return nil }
            return LoopInstant(nanoseconds: first.fireDate)
        }
    }

    // MARK: The one path

    func addItem<Item: ModeItem>(_ item: Item, mode: Loop.Mode) -> AddOutcome {
        var joined: [Loop.Mode] = []
        let outcome: AddOutcome = lock.withLockReporting { held in
            guard !held.loop.tornDown else { return .refused(.loopTornDown) }
            guard mode == .common else {
                guard let state = modeState(mode, create: true, held) else {
                    return .refused(modeRefusal(mode, held))
                }
                let outcome = add(item, to: state, held)
                if outcome == .added { joined.append(mode) }
                return outcome
            }
            if let refusal = addRefusal(for: item) { return .refused(refusal) }
            // M3: CF re-applies the add to every common mode even for an existing common item,
            // so an item removed from one common mode directly comes back.
            var outcome = AddOutcome.alreadyPresent
            if !held.loop.commonItems[keyPath: Item.commonList].contains(where: { $0 === item }) {
                held.loop.commonItems[keyPath: Item.commonList].append(item)
                outcome = .added
            }
            for name in held.loop.commonModeNames {
                let added = modeState(name, create: true, held).map { add(item, to: $0, held) }
                    ?? .refused(modeRefusal(name, held))
                if added == .added { joined.append(name) }
                outcome = outcome.merged(with: added)
            }
            return outcome
        }
        if !joined.isEmpty { item.didJoin(self, modes: joined) }
        if case .refused(let reason) = outcome {
            Diagnostics.report(.warning, .addRefused,
                               "\(type(of: item)) '\(item.label)' was not added to mode '\(mode)': \(reason)",
                               item: item.label)
        }
        return outcome
    }

    /// Adds `item` to one concrete mode.
    func add<Item: ModeItem>(_ item: Item, to state: ModeState, _ held: borrowing LoopLock.Held) -> AddOutcome {
        if item.isHeld(by: state, held) { return .alreadyPresent }
        guard item.bind(self) else { return .refused(addRefusal(for: item) ?? .belongsToAnotherLoop) }
        if let failure = item.insert(into: state, of: self, held) {
            item.unbind(self)
            return .refused(.systemCall(failure))
        }
        return .added
    }

    /// Why an item cannot join `mode`, which `modeState` could not give: its creation failed
    /// (`makeMode`).
    func modeRefusal(_ mode: Loop.Mode, _ held: borrowing LoopLock.Held) -> AddRefusal {
        held.loop.unavailableModes[mode].map(AddRefusal.systemCall) ?? .loopTornDown
    }

    /// Why `item` may not join this loop, or nil if it may (the item's own lock decides).
    func addRefusal<Item: ModeItem>(for item: Item) -> AddRefusal? {
        if item.accepts(self) { return nil }
        return item.core.isValid ? .belongsToAnotherLoop : .invalidated
    }

    func removeItem<Item: ModeItem>(_ item: Item, mode: Loop.Mode) -> Bool {
        var left: [Loop.Mode] = []
        lock.withLockReporting { held in
            if mode == .common {
                guard let i = held.loop.commonItems[keyPath: Item.commonList].firstIndex(where: { $0 === item }) else { return }
                held.loop.commonItems[keyPath: Item.commonList].remove(at: i)
                for name in held.loop.commonModeNames {
                    if let state = held.loop.modes[name], remove(item, from: state, held) { left.append(name) }
                }
            } else if let state = held.loop.modes[mode], remove(item, from: state, held) {
                left.append(mode)
            }
        }
        if !left.isEmpty { item.didLeave(self, modes: left) }
        return !left.isEmpty
    }

    /// Takes `item` out of one concrete mode; false if the mode did not hold it.
    func remove<Item: ModeItem>(_ item: Item, from state: ModeState, _ held: borrowing LoopLock.Held) -> Bool {
        guard item.isHeld(by: state, held) else { return false }
        item.erase(from: state, of: self, held)
        item.unbind(self)
        return true
    }

    func containsItem<Item: ModeItem>(_ item: Item, mode: Loop.Mode) -> Bool {
        lock.withLock { held in
            if mode == .common { return held.loop.commonItems[keyPath: Item.commonList].contains { $0 === item } }
            guard let state = held.loop.modes[mode] else { return false }
            return item.isHeld(by: state, held)
        }
    }

    /// O6, S6, T7: drop an invalidated item from every mode and the common items.
    func purgeItem<Item: ModeItem>(_ item: Item) {
        var left: [Loop.Mode] = []
        lock.withLockReporting { held in
            held.loop.commonItems[keyPath: Item.commonList].removeAll { $0 === item }
            for name in held.loop.modeOrder where remove(item, from: held.loop.modes[name]!, held) { left.append(name) }
        }
        if !left.isEmpty { item.didLeave(self, modes: left) }
    }

    /// A mode that just became common takes every common item (M4); returns the sources0 that
    /// joined it, whose schedule callouts run after the lock is released.
    func addCommonItems(to state: ModeState, _ held: borrowing LoopLock.Held) -> [LoopSource] {
        let items = held.loop.commonItems
        let scheduled = items.sources0.filter { add($0, to: state, held) == .added }
        for observer in items.observers { _ = add(observer, to: state, held) }
        for timer in items.timers { _ = add(timer, to: state, held) }
        for port in items.ports { _ = add(port, to: state, held) }
        for file in items.files { _ = add(file, to: state, held) }
        return scheduled
    }

    /// T5/T6: re-sort a timer whose date changed in every mode holding it, and re-arm.
    func reposition(_ timer: LoopTimer) {
        let held = lock.lock()
        guard !held.loop.sleeping else { return repositionWaking(timer, held) }
        timer.core.lock.withLock { _ = reposition(timer, waiting: false, held) }
        held.unlock()
    }

    /// `reposition` for a loop that may be blocked in its wait: the re-arm writes the timer
    /// descriptors now (T6), system calls whose failures are reported once both locks are
    /// released. Out of line: the usual case (the loop's own thread, a loop not waiting) makes
    /// no system call.
    @inline(never)
    private func repositionWaking(_ timer: LoopTimer, _ held: consuming LoopLock.Held) {
        timer.core.lock.withLock { _ = reposition(timer, waiting: true, held) }
        held.unlockReporting()
    }

    /// T6 for `setNextFireDate` called on the thread of the loop whose modes hold the timer,
    /// which keeps that loop alive: no weak load of the loop (a loop with weak references
    /// retains and releases on a slow path). False when the calling thread's loop does not own
    /// the timer's schedule; the caller then takes the general path.
    static func moveTimerOnCurrentLoop(_ timer: LoopTimer, to date: UInt64) -> Bool {
        let owner = timer.scheduleLoop.load(ordering: .relaxed)
        guard owner != 0 else { return false }
        return withCurrentIfMade { loop in
            loop.identity == owner && loop.moveTimer(timer, to: date)
        } ?? false
    }

    /// Sets the timer's date and, if it is valid, repositions it in this loop's modes, under
    /// this loop's lock alone; false, changing nothing, when this loop does not own the
    /// timer's schedule (its modes do not hold the timer: the lock rule of the schedule).
    func moveTimer(_ timer: LoopTimer, to date: UInt64) -> Bool {
        let held = lock.lock()
        guard timer.isScheduled(in: self, held) else {
            held.unlock()
            return false
        }
        let waiting = held.loop.sleeping
        if timer.core.isValid { reposition(timer, at: date, waiting: waiting, held) }
        timer.setNextFireDateOwned(date)
        if waiting { held.unlockReporting() } else { held.unlock() }
        return true
    }

    /// `reposition` as the owner of the timer's schedule, or with the timer's lock held too:
    /// each of the timer's modes in this loop
    /// moves it to its current date (counting as inserted last among timers of that date, T2)
    /// and re-arms, `waiting` as `ModeState.rearm` takes it. Returns whether a mode of this
    /// loop holds the timer.
    @inline(__always) @discardableResult
    func reposition(_ timer: LoopTimer, waiting: Bool, _ held: borrowing LoopLock.Held) -> Bool {
        reposition(timer, at: timer.fireDate, waiting: waiting, held)
    }

    /// `reposition` to `date`, which the caller then makes the timer's: its modes' queues and
    /// the timer change in one critical section.
    @inline(__always) @discardableResult
    private func reposition(_ timer: LoopTimer, at date: UInt64, waiting: Bool, _ held: borrowing LoopLock.Held) -> Bool {
        let tolerance = timer.effectiveToleranceNs
        return timer.forEachSlotLocked(ofLoop: identity) { slot in
            slot.mode._withUnsafeGuaranteedRef { state in
                held[state].timers.update(at: slot.index, date: date, tolerance: tolerance)
                state.rearm(waiting: waiting, held)
            }
        }
    }
}

extension Loop {
    /// Re-registers an fd source's descriptor with a new interest in every mode holding it;
    /// all or nothing: on a failure the modes already changed are put back.
    func modifyInterest(of source: LoopFileSource, to bits: UInt32) throws(SystemCallError) {
        let failure: SystemCallError? = lock.withLockReporting { held in
            let holders = held.loop.modeOrder.compactMap { held.loop.modes[$0] }.filter { source.isHeld(by: $0, held) }
            let old = source.interestBitsNow
            for (index, state) in holders.enumerated() {
                if case .failure(let failure) = valueOrErrno("epoll_ctl(MOD)", {
                    rlk_epoll_modify(state.epollFD.raw, source.fd, bits, source.core.id, 0)
                }) {
                    for done in holders[..<index] {
                        valueOrErrno("epoll_ctl(MOD)") { rlk_epoll_modify(done.epollFD.raw, source.fd, old, source.core.id, 0) }
                            .deferringFailure(.systemCallFailed, "restoring the interest of '\(source.label)' in mode '\(done.mode)'",
                                              item: source.label, held)
                    }
                    return failure
                }
            }
            return nil
        }
        if let failure { throw failure }
    }
}
