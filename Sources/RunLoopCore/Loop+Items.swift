import CRunLoopShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Adding, removing and purging items (O1–O3, O6, S5, S6, T2, T6, T7, M3, M4).
// Every public entry point is thread-safe: it takes the loop's lock, and calls `schedule` /
// `cancel` callouts only after releasing it (S5).

extension Loop {
    // MARK: Observers

    /// Adds an observer to `mode`, or to every common mode for `.common` (M3). Adding it again
    /// is a no-op; adding an invalid observer or one that belongs to another loop is ignored,
    /// with a one-time diagnostic (O2).
    ///
    /// ```swift
    /// loop.add(LoopObserver(activities: .beforeWaiting) { _, _ in print("about to sleep") }, mode: .common)
    /// ```
    public func add(_ observer: LoopObserver, mode: Loop.Mode) {
        lock.withLock {
            if mode == .common {
                guard !tornDown, acceptsLocked(observer.core, label: observer.label) else { return }
                // M3: CF re-applies the add to every common mode even for an existing common item,
                // so an item removed from one common mode directly comes back.
                if !commonItems.observers.contains(where: { $0 === observer }) { commonItems.observers.append(observer) }
                for name in commonModeNames { addLocked(observer, to: modeStateLocked(name, create: true)!) }
            } else if let state = modeStateLocked(mode, create: true) {
                addLocked(observer, to: state)
            }
        }
    }

    /// Removes an observer from `mode` (or from the common modes for `.common`, only if it was
    /// added as a common item, M3). Removing an absent observer is a no-op.
    public func remove(_ observer: LoopObserver, mode: Loop.Mode) {
        lock.withLock {
            if mode == .common {
                guard let i = commonItems.observers.firstIndex(where: { $0 === observer }) else { return }
                commonItems.observers.remove(at: i)
                for name in commonModeNames { if let state = modes[name] { removeLocked(observer, from: state) } }
            } else if let state = modes[mode] {
                removeLocked(observer, from: state)
            }
        }
    }

    /// Whether `mode` holds the observer (for `.common`: whether it is a common item).
    public func contains(_ observer: LoopObserver, mode: Loop.Mode) -> Bool {
        lock.withLock {
            if mode == .common { return commonItems.observers.contains { $0 === observer } }
            return modes[mode]?.observers.contains { $0 === observer } ?? false
        }
    }

    /// The observers of `mode` in call order (O1). Empty for a missing mode or `.common`.
    public func observers(in mode: Loop.Mode) -> [LoopObserver] {
        lock.withLock { modes[mode]?.observers ?? [] }
    }

    @discardableResult
    func addLocked(_ observer: LoopObserver, to state: ModeState) -> Bool {
        guard !state.observers.contains(where: { $0 === observer }) else { return false }
        guard bindLocked(observer.core, label: observer.label) else { return false }
        state.insertSorted(observer)
        state.observersChanged()
        state.observerMask.bitwiseOr(observer.activities.rawValue, ordering: .relaxed)  // O3
        return true
    }

    func removeLocked(_ observer: LoopObserver, from state: ModeState) {
        guard let i = state.observers.firstIndex(where: { $0 === observer }) else { return }
        state.observers.remove(at: i)
        state.observersChanged()
        observer.core.unbind(self)
    }

    /// O6: drop an invalidated observer from every mode and the common items.
    func purge(_ observer: LoopObserver) {
        lock.withLock {
            commonItems.observers.removeAll { $0 === observer }
            for state in modes.values { removeLocked(observer, from: state) }
        }
    }

    // MARK: Sources (version 0)

    /// Adds a source to `mode` (or every common mode), then calls its `schedule` callout once
    /// per concrete mode it joined, with the lock released (S5). A source may be in several
    /// loops. Adding an invalid source is ignored with a one-time diagnostic.
    ///
    /// ```swift
    /// loop.add(LoopSource(label: "input") { handleInput() }, mode: .default)
    /// ```
    public func add(_ source: LoopSource, mode: Loop.Mode) {
        var joined: [Loop.Mode] = []
        lock.withLock {
            if mode == .common {
                guard !tornDown, acceptsLocked(source.core, label: source.label) else { return }
                // M3: CF re-applies the add to every common mode even for an existing common item,
                // so an item removed from one common mode directly comes back.
                if !commonItems.sources0.contains(where: { $0 === source }) { commonItems.sources0.append(source) }
                for name in commonModeNames where addLocked(source, to: modeStateLocked(name, create: true)!) {
                    joined.append(name)
                }
            } else if let state = modeStateLocked(mode, create: true), addLocked(source, to: state) {
                joined.append(mode)
            }
        }
        if let schedule = source.scheduleCallout { for name in joined { schedule(self, name) } }
    }

    /// Removes a source from `mode` (or the common modes) and calls `cancel` per mode left (S5).
    public func remove(_ source: LoopSource, mode: Loop.Mode) {
        var left: [Loop.Mode] = []
        lock.withLock {
            if mode == .common {
                guard let i = commonItems.sources0.firstIndex(where: { $0 === source }) else { return }
                commonItems.sources0.remove(at: i)
                for name in commonModeNames {
                    if let state = modes[name], removeLocked(source, from: state) { left.append(name) }
                }
            } else if let state = modes[mode], removeLocked(source, from: state) {
                left.append(mode)
            }
        }
        if let cancel = source.cancelCallout { for name in left { cancel(self, name) } }
    }

    /// Whether `mode` holds the source (for `.common`: whether it is a common item).
    public func contains(_ source: LoopSource, mode: Loop.Mode) -> Bool {
        lock.withLock {
            if mode == .common { return commonItems.sources0.contains { $0 === source } }
            return modes[mode]?.sources0.contains { $0 === source } ?? false
        }
    }

    @discardableResult
    func addLocked(_ source: LoopSource, to state: ModeState) -> Bool {
        guard !state.sources0.contains(where: { $0 === source }) else { return false }
        guard bindLocked(source.core, label: source.label) else { return false }
        state.sources0.append(source)
        state.sources0Changed()
        return true
    }

    func removeLocked(_ source: LoopSource, from state: ModeState) -> Bool {
        guard let i = state.sources0.firstIndex(where: { $0 === source }) else { return false }
        state.sources0.remove(at: i)
        state.sources0Changed()
        source.core.unbind(self)
        return true
    }

    /// S6: drop an invalidated source everywhere, calling `cancel` for each mode it left.
    func purge(_ source: LoopSource) {
        var left: [Loop.Mode] = []
        lock.withLock {
            commonItems.sources0.removeAll { $0 === source }
            for name in modeOrder where removeLocked(source, from: modes[name]!) { left.append(name) }
        }
        if let cancel = source.cancelCallout { for name in left { cancel(self, name) } }
    }

    // MARK: Port sources (version 1)

    /// Adds a message port to `mode` (or every common mode). A port belongs to one loop.
    ///
    /// ```swift
    /// loop.add(port, mode: .default); port.send(value: "hello")
    /// ```
    public func add(_ source: LoopPortSource, mode: Loop.Mode) {
        lock.withLock {
            if mode == .common {
                guard !tornDown, acceptsLocked(source.core, label: source.label) else { return }
                // M3: CF re-applies the add to every common mode even for an existing common item,
                // so an item removed from one common mode directly comes back.
                if !commonItems.ports.contains(where: { $0 === source }) { commonItems.ports.append(source) }
                for name in commonModeNames { addLocked(source, to: modeStateLocked(name, create: true)!) }
            } else if let state = modeStateLocked(mode, create: true) {
                addLocked(source, to: state)
            }
        }
    }

    /// Removes a port from `mode` (or the common modes). Pending messages stay queued.
    public func remove(_ source: LoopPortSource, mode: Loop.Mode) {
        lock.withLock {
            if mode == .common {
                guard let i = commonItems.ports.firstIndex(where: { $0 === source }) else { return }
                commonItems.ports.remove(at: i)
                for name in commonModeNames { if let state = modes[name] { removeLocked(source, from: state) } }
            } else if let state = modes[mode] {
                removeLocked(source, from: state)
            }
        }
    }

    /// Whether `mode` holds the port (for `.common`: whether it is a common item).
    public func contains(_ source: LoopPortSource, mode: Loop.Mode) -> Bool {
        lock.withLock {
            if mode == .common { return commonItems.ports.contains { $0 === source } }
            return modes[mode]?.ports[source.core.id] != nil
        }
    }

    @discardableResult
    func addLocked(_ source: LoopPortSource, to state: ModeState) -> Bool {
        guard state.ports[source.core.id] == nil else { return false }
        guard bindLocked(source.core, label: source.label) else { return false }
        state.ports[source.core.id] = source
        _ = rlk_epoll_add(state.epollFD, source.fd, 1, source.core.id, 0)  // S7
        return true
    }

    func removeLocked(_ source: LoopPortSource, from state: ModeState) {
        guard state.ports.removeValue(forKey: source.core.id) != nil else { return }
        _ = rlk_epoll_remove(state.epollFD, source.fd)
        source.core.unbind(self)
    }

    func purge(_ source: LoopPortSource) {
        lock.withLock {
            commonItems.ports.removeAll { $0 === source }
            for state in modes.values { removeLocked(source, from: state) }
        }
    }

    // MARK: File-descriptor sources

    /// Adds an fd source to `mode` (or every common mode). One source per fd per mode: the
    /// kernel refuses a second registration of the same fd (and regular files), which is
    /// reported once on stderr and leaves the source out of that mode.
    ///
    /// ```swift
    /// loop.add(LoopFileSource(fd: pipeRead, events: .readable) { _ in drain() }, mode: .default)
    /// ```
    public func add(_ source: LoopFileSource, mode: Loop.Mode) {
        lock.withLock {
            if mode == .common {
                guard !tornDown, acceptsLocked(source.core, label: source.label) else { return }
                // M3: CF re-applies the add to every common mode even for an existing common item,
                // so an item removed from one common mode directly comes back.
                if !commonItems.files.contains(where: { $0 === source }) { commonItems.files.append(source) }
                for name in commonModeNames { addLocked(source, to: modeStateLocked(name, create: true)!) }
            } else if let state = modeStateLocked(mode, create: true) {
                addLocked(source, to: state)
            }
        }
    }

    /// Removes an fd source from `mode` (or the common modes). The fd is not touched.
    public func remove(_ source: LoopFileSource, mode: Loop.Mode) {
        lock.withLock {
            if mode == .common {
                guard let i = commonItems.files.firstIndex(where: { $0 === source }) else { return }
                commonItems.files.remove(at: i)
                for name in commonModeNames { if let state = modes[name] { removeLocked(source, from: state) } }
            } else if let state = modes[mode] {
                removeLocked(source, from: state)
            }
        }
    }

    /// Whether `mode` holds the fd source (for `.common`: whether it is a common item).
    public func contains(_ source: LoopFileSource, mode: Loop.Mode) -> Bool {
        lock.withLock {
            if mode == .common { return commonItems.files.contains { $0 === source } }
            return modes[mode]?.files[source.core.id] != nil
        }
    }

    @discardableResult
    func addLocked(_ source: LoopFileSource, to state: ModeState) -> Bool {
        guard state.files[source.core.id] == nil else { return false }
        guard bindLocked(source.core, label: source.label) else { return false }
        let interest = source.events.rawValue & 3
        guard rlk_epoll_add(state.epollFD, source.fd, interest, source.core.id, 0) == 0 else {
            Diagnostics.once("fd-refused-\(source.fd)",
                             "LoopFileSource '\(source.label)': fd \(source.fd) cannot be watched in mode '\(state.mode.name)' (errno \(errno): closed, a regular file, or already watched by another source in this mode); ignored")
            source.core.unbind(self)
            return false
        }
        state.files[source.core.id] = source
        return true
    }

    func removeLocked(_ source: LoopFileSource, from state: ModeState) {
        guard state.files.removeValue(forKey: source.core.id) != nil else { return }
        _ = rlk_epoll_remove(state.epollFD, source.fd)
        source.core.unbind(self)
    }

    func purge(_ source: LoopFileSource) {
        lock.withLock {
            commonItems.files.removeAll { $0 === source }
            for state in modes.values { removeLocked(source, from: state) }
        }
    }

    // MARK: Timers

    /// Adds a timer to `mode` (or every common mode). A timer may be in several modes of one
    /// loop; adding it to a second loop is ignored with a one-time diagnostic (T2). No wake-up
    /// is needed: the mode's timer descriptor is re-armed and wakes a sleeping run (T6).
    ///
    /// ```swift
    /// loop.add(try LoopTimer(after: 0.02, clock: loop.clock) { _ in print("fired") }, mode: .default)
    /// ```
    public func add(_ timer: LoopTimer, mode: Loop.Mode) {
        lock.withLock {
            if mode == .common {
                guard !tornDown, acceptsLocked(timer.core, label: timer.label) else { return }
                // M3: CF re-applies the add to every common mode even for an existing common item,
                // so an item removed from one common mode directly comes back.
                if !commonItems.timers.contains(where: { $0 === timer }) { commonItems.timers.append(timer) }
                for name in commonModeNames { addLocked(timer, to: modeStateLocked(name, create: true)!) }
            } else if let state = modeStateLocked(mode, create: true) {
                addLocked(timer, to: state)
            }
        }
    }

    /// Removes a timer from `mode` (or the common modes); it stays valid (T2).
    public func remove(_ timer: LoopTimer, mode: Loop.Mode) {
        lock.withLock {
            if mode == .common {
                guard let i = commonItems.timers.firstIndex(where: { $0 === timer }) else { return }
                commonItems.timers.remove(at: i)
                for name in commonModeNames { if let state = modes[name] { removeLocked(timer, from: state) } }
            } else if let state = modes[mode] {
                removeLocked(timer, from: state)
            }
        }
    }

    /// Whether `mode` holds the timer (for `.common`: whether it is a common item).
    public func contains(_ timer: LoopTimer, mode: Loop.Mode) -> Bool {
        lock.withLock {
            if mode == .common { return commonItems.timers.contains { $0 === timer } }
            return modes[mode]?.timers.contains { $0 === timer } ?? false
        }
    }

    /// The next fire date of the first timer of `mode` (T9); nil when it has none.
    public func nextTimerFireDate(in mode: Loop.Mode) -> LoopInstant? {
        lock.withLock {
            guard let first = modes[mode]?.timers.first else { return nil }
            return first.core.lock.withLock { first.fireDate }
        }
    }

    @discardableResult
    func addLocked(_ timer: LoopTimer, to state: ModeState) -> Bool {
        guard !state.timers.contains(where: { $0 === timer }) else { return false }
        guard bindLocked(timer.core, label: timer.label) else { return false }
        state.insertSorted(timer)
        state.rearm(waiting: sleeping)
        return true
    }

    func removeLocked(_ timer: LoopTimer, from state: ModeState) {
        guard let i = state.timers.firstIndex(where: { $0 === timer }) else { return }
        state.timers.remove(at: i)
        timer.core.unbind(self)
        state.rearm(waiting: sleeping)
    }

    /// T7: drop an invalidated timer from every mode and the common items.
    func purge(_ timer: LoopTimer) {
        lock.withLock {
            commonItems.timers.removeAll { $0 === timer }
            for state in modes.values { removeLocked(timer, from: state) }
        }
    }

    /// T5/T6: re-sort a timer whose date changed in every mode holding it, and re-arm.
    func reposition(_ timer: LoopTimer) {
        lock.withLock {
            for state in modes.values {
                guard let i = state.timers.firstIndex(where: { $0 === timer }) else { continue }
                state.timers.remove(at: i)
                state.insertSorted(timer)
                state.rearm(waiting: sleeping)
            }
        }
    }

    // MARK: Membership checks and diagnostics

    /// Whether an item may join this loop at all; reports a refusal once. Lock held.
    func acceptsLocked(_ core: ItemCore, label: String) -> Bool {
        if core.accepts(self) { return true }
        reportRefusal(core, label: label)
        return false
    }

    /// Binds an item to one more concrete mode of this loop; reports a refusal once. Lock held.
    func bindLocked(_ core: ItemCore, label: String) -> Bool {
        if core.bind(self) { return true }
        reportRefusal(core, label: label)
        return false
    }

    private func reportRefusal(_ core: ItemCore, label: String) {
        if !core.isValid {
            Diagnostics.once("invalid-item-added",
                             "an invalidated item ('\(label)') was added to a loop; ignored (as CF does)")
        } else {
            Diagnostics.once("second-loop-item",
                             "item '\(label)' already belongs to another loop; adding it to a second loop is ignored (as CF does)")
        }
    }
}
