#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Carries a thread-confined value (a layer, a counter) into a `@Sendable` closure such as
/// `loop.async { }` or `loop.perform { }` that runs on the loop's own thread — the thread that
/// created the box. Reading it on another thread traps, which is what makes the
/// `@unchecked Sendable` sound.
///
/// ```swift
/// let table = LoopThreadBound(tableView)
/// loop.async { table.value.setNeedsLayout() }      // runs on this thread's loop
/// ```
struct LoopThreadBound<Value>: @unchecked Sendable {
    private let stored: Value
    private let owner = pthread_self()

    init(_ value: Value) { stored = value }

    var value: Value {
        precondition(pthread_equal(owner, pthread_self()) != 0,
                     "LoopThreadBound: a value confined to its loop's thread was used on another thread")
        return stored
    }
}

/// A counter and list shared between a scenario and its callouts, all on the loop's thread.
final class Tally {
    private(set) var items: [String] = []
    var count: Int { items.count }
    func add(_ item: String) { items.append(item) }
}
