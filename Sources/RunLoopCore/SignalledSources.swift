import PThreads
import Synchronization

/// One source0 in one mode (S2, S5). A signal puts the registrations of its source into their
/// modes' `signalled` lists, so a pass looks at the sources signalled for its mode instead of
/// scanning every source0 of the mode: the pass costs the sources signalled, not the sources
/// registered. The order of the performs is unchanged: ascending `order`, ties by signal stamp.
final class Source0Registration: Sendable {
    /// `ModeState.id` of the mode.
    let modeID: UInt64
    /// Unretained: the registration is in its source's `registrations` only while the mode
    /// holds the source, and a mode that goes away unregisters its sources first
    /// (`ModeState.deinit`), under the source's lock that `enqueue` runs under.
    let mode: Unmanaged<ModeState>
    /// Unretained: followed only while `active` under the mode's `signalLock`, and an active
    /// registration's source is in the mode's `sources0`, which keeps it alive.
    unowned(unsafe) let source: LoopSource
    /// In `mode.signalled` now. `nonisolated(unsafe)`, `@exclusivity(unchecked)`: the mode's
    /// `signalLock` serialises access.
    @exclusivity(unchecked) nonisolated(unsafe) var queued = false
    /// The source is still in the mode. `nonisolated(unsafe)`, `@exclusivity(unchecked)`: as `queued`.
    @exclusivity(unchecked) nonisolated(unsafe) var active = true

    init(mode: ModeState, source: LoopSource) {
        self.modeID = mode.id
        self.mode = Unmanaged.passUnretained(mode)
        self.source = source
    }

    /// Puts the registration into its mode's signalled list unless it is there or left. Any
    /// thread, the source's lock held.
    func enqueue() {
        mode._withUnsafeGuaranteedRef { enqueue(into: $0) }
    }

    private func enqueue(into mode: ModeState) {
        mode.signalLock.lock()
        if active && !queued {
            queued = true
            mode.signalled.append(self)
            mode.hasSignalled.store(true, ordering: .releasing)
        }
        mode.signalLock.unlock()
    }
}

extension ModeState {
    /// Puts the signalled, valid sources of the mode into `picks` (S2) and drops from the
    /// list those no longer signalled. The signalled ones stay listed until a later pass finds
    /// them performed: a nested run of the mode during this pass's performs sees them as CF's
    /// scan would, and a source left signalled by a run that returns after one source (rash)
    /// is found by the next pass. Loop thread; takes `signalLock` only.
    func takeSignalled(into picks: inout [Source0Pick]) {
        let lock = LentMutex(signalLock)   // lent: the mode keeps its lock
        lock.lock()
        // The registrations and their sources are lent, not retained: the list holds the
        // registrations, and an active registration's source is in the mode's `sources0`. Only
        // a pick takes a reference, which keeps its source alive through the performs.
        // Mutable access, so the list (in this class) is not retained around the walk.
        let kept = signalled.withUnsafeMutableBufferPointer { list -> Int in
            var kept = 0
            for index in list.indices {
                let taken = Unmanaged.passUnretained(list[index])._withUnsafeGuaranteedRef { registration -> Bool in
                    if registration.active {
                        let stamp = registration.source.signalStamp.load(ordering: .acquiring)
                        if stamp != 0 && registration.source.core.isValid {
                            picks.append(Source0Pick(source: registration.source, order: registration.source.order, stamp: stamp))
                            return true
                        }
                    }
                    registration.queued = false
                    return false
                }
                guard taken else { continue }
                if kept != index { list.swapAt(kept, index) }
                kept += 1
            }
            return kept
        }
        signalled.truncate(to: kept)
        hasSignalled.store(kept > 0, ordering: .releasing)
        lock.unlock()
    }

    /// The source of `registration` left the mode: it is never taken from the list again.
    func deactivate(_ registration: Source0Registration) {
        signalLock.lock()
        registration.active = false
        if registration.queued {
            registration.queued = false
            signalled.removeAll { $0 === registration }
            hasSignalled.store(!signalled.isEmpty, ordering: .releasing)
        }
        signalLock.unlock()
    }
}

extension LoopSource {
    /// Whether `state` holds the source (its registrations, under the source's lock).
    func isRegistered(in state: ModeState) -> Bool {
        core.lock.withLock { registrations.contains { $0.modeID == state.id } }
    }

    /// Records that `state` now holds the source; a source already signalled is queued at once
    /// (it is as signalled in its new mode as in the others). Loop lock held.
    func register(in state: ModeState) {
        let registration = Source0Registration(mode: state, source: self)
        core.lock.withLock {
            registrations.append(registration)
            if signalStamp.load(ordering: .relaxed) != 0 { registration.enqueue() }
        }
    }

    /// Records that `state` no longer holds the source. Loop lock held, or `state` going away.
    func unregister(from state: ModeState) {
        let registration: Source0Registration? = core.lock.withLock {
            registrations.firstIndex { $0.modeID == state.id }.map { registrations.remove(at: $0) }
        }
        if let registration { state.deactivate(registration) }
    }
}
