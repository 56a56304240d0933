import PThreads
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The tasks sleeping on a ``VirtualClock``: each waits for a deadline in nanoseconds and is
/// resumed, in deadline order (ties in the order they began to sleep), by the advance that
/// reaches it, or at once by cancellation.
final class VirtualSleepers: Sendable {
    fileprivate struct Sleeper {
        /// Handed out in the order sleeps begin: the tie-break between equal deadlines.
        let id: UInt64
        let deadline: UInt64
        /// The clock's reading when the sleep began (for reports of sleepers left behind).
        let since: UInt64
        /// The thread the sleep began on (`pthread_self`), so a test harness can tell a task
        /// of its loop's thread from one that sleeps elsewhere.
        let thread: UInt
        /// nil until the continuation is registered (cancellation may come first).
        var continuation: CheckedContinuation<Void, any Error>?

        /// Deadline order, ties in sleep order.
        func precedes(_ other: Sleeper) -> Bool { (deadline, id) < (other.deadline, other.id) }
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
        let thread = currentThreadNumber()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    state.pending.remove(id)
                    if state.cancelledEarly.remove(id) != nil { return .failure(CancellationError()) }
                    // The clock may have reached the deadline between the check above and now.
                    let now = clockNow()
                    if deadline <= now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, since: now, thread: thread,
                                                  continuation: continuation))
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
            return due.sorted { $0.precedes($1) }
        }
        for sleeper in due { sleeper.continuation?.resume() }
    }

    /// The earliest deadline of a registered sleeper, or nil when none sleeps.
    var nextDeadline: UInt64? {
        guard registered.load(ordering: .acquiring) > 0 else { return nil }
        return state.withLock { state in state.sleepers.min { $0.precedes($1) }?.deadline }
    }

    /// Resumes only the first sleeper in deadline order (ties: the one that began to sleep
    /// first) if its deadline is at or before `now`; what it was, or nil when none is due.
    func resumeFirst(dueBy now: UInt64) -> VirtualSleeperInfo? {
        guard registered.load(ordering: .acquiring) > 0 else { return nil }
        let first = state.withLock { state -> Sleeper? in
            guard let index = state.sleepers.indices.min(by: { state.sleepers[$0].precedes(state.sleepers[$1]) }),
                  state.sleepers[index].deadline <= now else { return nil }
            registered.wrappingSubtract(1, ordering: .releasing)
            return state.sleepers.remove(at: index)
        }
        guard let first else { return nil }
        first.continuation?.resume()
        return VirtualSleeperInfo(first)
    }

    /// The registered sleepers in the order they would resume.
    var infos: [VirtualSleeperInfo] {
        state.withLock { state in state.sleepers.sorted { $0.precedes($1) }.map(VirtualSleeperInfo.init) }
    }

    /// Resumes every registered sleeper with `CancellationError`, as cancelling each task would;
    /// returns what they were, in the order they would have resumed.
    func cancelAll() -> [VirtualSleeperInfo] {
        let all = state.withLock { state -> [Sleeper] in
            let all = state.sleepers.sorted { $0.precedes($1) }
            state.sleepers.removeAll()
            registered.wrappingSubtract(all.count, ordering: .releasing)
            return all
        }
        for sleeper in all { sleeper.continuation?.resume(throwing: CancellationError()) }
        return all.map(VirtualSleeperInfo.init)
    }
}

/// What a test harness may know of one task sleeping on a ``VirtualClock``.
package struct VirtualSleeperInfo: Sendable, Equatable {
    /// When it is to resume, in nanoseconds of the clock.
    package let deadline: UInt64
    /// The clock's reading when it began to sleep.
    package let since: UInt64
    /// `pthread_self()` of the thread it began to sleep on, as a number.
    package let thread: UInt

    fileprivate init(_ sleeper: VirtualSleepers.Sleeper) {
        deadline = sleeper.deadline
        since = sleeper.since
        thread = sleeper.thread
    }
}

/// `pthread_self()` as a number (a pointer on Darwin, an integer on Linux).
package func currentThreadNumber() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}
