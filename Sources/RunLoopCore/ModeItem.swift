import CRunLoopShims

/// The one registration path: what the loop needs to know to put an item of one kind into a
/// mode, take it out, and remember it as a common item. Observers, sources0, ports, fd sources
/// and timers conform; `Loop.addItem` / `removeItem` / `purgeItem` do the rest once for all.
protocol ModeItem: AnyObject {
    var core: ItemCore { get }
    var label: String { get }
    /// Where the loop remembers the item when it is added to `.common` (M3).
    static var commonList: WritableKeyPath<CommonItems, [Self]> { get }
    /// Whether `state` holds the item.
    func isHeld(by state: ModeState, _ held: borrowing LoopLock.Held) -> Bool
    /// Puts the item (already bound to `loop`) into `state`; a failure leaves `state` as it was.
    func insert(into state: ModeState, of loop: Loop, _ held: borrowing LoopLock.Held) -> SystemCallError?
    /// Takes the item out of `state`, which holds it. A system call that fails is deferred to
    /// the lock's release.
    func erase(from state: ModeState, of loop: Loop, _ held: borrowing LoopLock.Held)
    /// After the lock is released: the concrete modes the item joined (S5's schedule callout).
    func didJoin(_ loop: Loop, modes: [Loop.Mode])
    /// After the lock is released: the concrete modes the item left (S5's cancel callout).
    func didLeave(_ loop: Loop, modes: [Loop.Mode])
    /// Records one more concrete mode of `loop` holding the item; false if the item refuses
    /// (invalid, or bound to another loop).
    func bind(_ loop: Loop) -> Bool
    /// Records that one concrete mode of `loop` dropped the item.
    func unbind(_ loop: Loop)
    /// Whether `loop` may take the item.
    func accepts(_ loop: Loop) -> Bool
}

extension ModeItem {
    func didJoin(_ loop: Loop, modes: [Loop.Mode]) {}
    func didLeave(_ loop: Loop, modes: [Loop.Mode]) {}
    // A single-loop item (all but a source0): its core records its one loop.
    func bind(_ loop: Loop) -> Bool { core.bind(loop) }
    func unbind(_ loop: Loop) { core.unbind(loop) }
    func accepts(_ loop: Loop) -> Bool { core.accepts(loop) }
}

extension LoopObserver: ModeItem {
    static var commonList: WritableKeyPath<CommonItems, [LoopObserver]> { \.observers }
    func isHeld(by state: ModeState, _ held: borrowing LoopLock.Held) -> Bool { held[state].observers.contains { $0 === self } }
    func insert(into state: ModeState, of loop: Loop, _ held: borrowing LoopLock.Held) -> SystemCallError? {
        held[state].value.insertSorted(self)
        state.observersChanged(held)
        state.observerMask.bitwiseOr(activities.rawValue, ordering: .relaxed)  // O3: the sink hears every activity ever observed
        state.liveObserverMask.bitwiseOr(activities.rawValue, ordering: .relaxed)
        return nil
    }
    func erase(from state: ModeState, of loop: Loop, _ held: borrowing LoopLock.Held) {
        held[state].observers.removeAll { $0 === self }
        state.observersChanged(held)
        let left = held[state].observers.reduce(UInt32(0)) { $0 | $1.activities.rawValue }
        state.liveObserverMask.store(left, ordering: .relaxed)
    }
}

extension LoopSource: ModeItem {
    static var commonList: WritableKeyPath<CommonItems, [LoopSource]> { \.sources0 }
    func isHeld(by state: ModeState, _ held: borrowing LoopLock.Held) -> Bool { isRegistered(in: state) }
    func insert(into state: ModeState, of loop: Loop, _ held: borrowing LoopLock.Held) -> SystemCallError? {
        held[state].sources0.append(self)
        register(in: state)
        return nil
    }
    func erase(from state: ModeState, of loop: Loop, _ held: borrowing LoopLock.Held) {
        unregister(from: state)
        held[state].sources0.removeAll { $0 === self }
    }
    func didJoin(_ loop: Loop, modes: [Loop.Mode]) {
        if let scheduleCallout { for mode in modes { scheduleCallout(loop, mode) } }
    }
    func didLeave(_ loop: Loop, modes: [Loop.Mode]) {
        if let cancelCallout { for mode in modes { cancelCallout(loop, mode) } }
    }
}

extension LoopTimer: ModeItem {
    static var commonList: WritableKeyPath<CommonItems, [LoopTimer]> { \.timers }
    func isHeld(by state: ModeState, _ held: borrowing LoopLock.Held) -> Bool {
        core.lock.withLock { placements.contains { $0.modeID == state.id } }
    }
    func insert(into state: ModeState, of loop: Loop, _ held: borrowing LoopLock.Held) -> SystemCallError? {
        let slot = TimerSlot(loopID: loop.identity, mode: state)
        let (date, tolerance) = join(slot)
        held[state].timers.insert(self, date: date, tolerance: tolerance, slot: slot)
        state.rearm(waiting: held.loop.sleeping, held)  // T6: a sleeping run re-arms, no wake-up needed
        return nil
    }
    func erase(from state: ModeState, of loop: Loop, _ held: borrowing LoopLock.Held) {
        if let slot = leave(modeID: state.id, ofLoop: loop.identity) {
            let dropped = held[state].timers.remove(at: slot.index)
            // A pass of the mode firing timers may have it in its due list, unretained.
            if held[state].timerPasses > 0 { held[state].parkedTimers.append(dropped) }
        }
        state.rearm(waiting: held.loop.sleeping, held)
    }
}

extension LoopPortSource: ModeItem {
    static var commonList: WritableKeyPath<CommonItems, [LoopPortSource]> { \.ports }
    func isHeld(by state: ModeState, _ held: borrowing LoopLock.Held) -> Bool { held[state].ports[core.id] != nil }
    func insert(into state: ModeState, of loop: Loop, _ held: borrowing LoopLock.Held) -> SystemCallError? {
        // S7: the port's descriptor joins the mode's wait set.
        if case .failure(let failure) = valueOrErrno("epoll_ctl(ADD)", {
            rlk_epoll_add(state.epollFD.raw, fd, 1, core.id, 0)
        }) { return failure }
        held[state].ports[core.id] = self
        return nil
    }
    func erase(from state: ModeState, of loop: Loop, _ held: borrowing LoopLock.Held) {
        held[state].ports[core.id] = nil
        valueOrErrno("epoll_ctl(DEL)") { rlk_epoll_remove(state.epollFD.raw, fd) }
            .deferringFailure(.systemCallFailed, "removing port '\(label)' from mode '\(state.mode)'", item: label, held)
    }
}

extension LoopFileSource: ModeItem {
    static var commonList: WritableKeyPath<CommonItems, [LoopFileSource]> { \.files }
    func isHeld(by state: ModeState, _ held: borrowing LoopLock.Held) -> Bool { held[state].files[core.id] != nil }
    func insert(into state: ModeState, of loop: Loop, _ held: borrowing LoopLock.Held) -> SystemCallError? {
        if case .failure(let failure) = valueOrErrno("epoll_ctl(ADD)", {
            rlk_epoll_add(state.epollFD.raw, fd, interestBitsNow, core.id, 0)
        }) { return failure }
        held[state].files[core.id] = self
        return nil
    }
    func erase(from state: ModeState, of loop: Loop, _ held: borrowing LoopLock.Held) {
        held[state].files[core.id] = nil
        // A descriptor closed before its source was removed has already left every epoll set.
        valueOrErrno("epoll_ctl(DEL)") { rlk_epoll_remove(state.epollFD.raw, fd) }
            .deferringFailure(.systemCallFailed,
                              "removing fd \(fd) from mode '\(state.mode)' (closed before its source was removed?)",
                              item: label, severity: .warning, held)
    }
}
