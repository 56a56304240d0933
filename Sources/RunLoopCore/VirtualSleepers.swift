import PThreads
import Synchronization

/// The tasks sleeping on a ``VirtualClock``: each waits for a deadline in nanoseconds and is
/// resumed, in deadline order, by the advance that reaches it, or at once by cancellation.
final class VirtualSleepers: Sendable {
    private struct Sleeper {
        let id: UInt64
        let deadline: UInt64
        /// nil until the continuation is registered (cancellation may come first).
        var continuation: CheckedContinuation<Void, any Error>?
    }

    private struct State {
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        /// Ids handed out whose continuation is not registered yet.
        var pending: Set<UInt64> = []
        /// Ids cancelled before their continuation was registered.
        var cancelledEarly: Set<UInt64> = []
    }

    private let state = Locked(State())
    /// Mirror of `state.sleepers.count`, so an advance with nobody asleep takes no lock.
    private let registered = Atomic<Int>(0)

    var count: Int { state.withLock { $0.sleepers.count } }

    func sleep(until deadline: UInt64, clockNow: @Sendable () -> UInt64) async throws {
        if deadline <= clockNow() {
            try Task.checkCancellation()
            return
        }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.pending.insert(state.nextID)
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    state.pending.remove(id)
                    if state.cancelledEarly.remove(id) != nil { return .failure(CancellationError()) }
                    // The clock may have reached the deadline between the check above and now.
                    if deadline <= clockNow() { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    registered.wrappingAdd(1, ordering: .releasing)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                if let index = state.sleepers.firstIndex(where: { $0.id == id }) {
                    registered.wrappingSubtract(1, ordering: .releasing)
                    return state.sleepers.remove(at: index).continuation
                }
                // Not registered yet: the registration sees this and throws. Already resumed: nothing to do.
                if state.pending.contains(id) { state.cancelledEarly.insert(id) }
                return nil
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Resumes every sleeper whose deadline is at or before `now`, earliest first.
    func resume(upTo now: UInt64) {
        guard registered.load(ordering: .acquiring) > 0 else { return }
        let due = state.withLock { state -> [Sleeper] in
            guard state.sleepers.contains(where: { $0.deadline <= now }) else { return [] }
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            registered.wrappingSubtract(due.count, ordering: .releasing)
            return due.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
        }
        for sleeper in due { sleeper.continuation?.resume() }
    }
}
