// The hooks of the polling-pass and due-timer works on a loop: observers for every activity, or
// each for one activity a polling pass reaches once (as libuv's prepare and check handles).

import RunLoopCore

/// The activity of hook `index` of a set called once per pass: half before the timers, half
/// before the sources, as libuv's prepare and check handles run before and after its poll.
@inlinable
public func oncePerPassActivity(_ index: Int) -> Loop.Activity {
    index % 2 == 0 ? .beforeTimers : .beforeSources
}

/// `count` observers in `mode` of `loop`: for every activity, or (`oncePerPass`) each for one
/// activity a polling pass reaches once. Each call runs `bump` (inlinable: a caller's `bump` that
/// bumps a global is then called directly, as a hook written in place would be).
@inlinable
public func installLoopHooks(_ count: Int, oncePerPass: Bool, on loop: Loop, mode: Loop.Mode = .default,
                             bump: @escaping @Sendable () -> Void) -> [LoopObserver] {
    let observers = (0..<count).map { index in
        LoopObserver(activities: oncePerPass ? oncePerPassActivity(index) : .allActivities, label: "bench") { _, _ in
            bump()
        }
    }
    for observer in observers { loop.add(observer, mode: mode) }
    return observers
}

/// Removes and invalidates the observers `installLoopHooks` added.
@inlinable
public func removeLoopHooks(_ observers: [LoopObserver], from loop: Loop, mode: Loop.Mode = .default) {
    for observer in observers {
        loop.remove(observer, mode: mode)
        observer.invalidate()
    }
}
