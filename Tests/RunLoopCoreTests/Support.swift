import Testing
import PThreads
@testable import RunLoopCore
import CRunLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// A thread-safe list of strings: activities (E, BT, …) and callout labels, in call order.
final class Trace: @unchecked Sendable {  // `items` is guarded by `lock`
    private let lock = PThreadMutex()
    private var items: [String] = []

    func add(_ item: String) { lock.withLock { items.append(item) } }
    var all: [String] { lock.withLock { items } }
    func reset() { lock.withLock { items.removeAll() } }
}

/// Observes every activity of `mode` at `order`, recording its short name (E, BT, BS, BW, AW, X).
@discardableResult
func recordActivities(_ loop: Loop, _ trace: Trace, mode: Loop.Mode = .default, order: Int = 0,
                      prefix: String = "") -> LoopObserver {
    let observer = LoopObserver(activities: .allActivities, order: order, label: "recorder") { _, activity in
        trace.add(prefix + activity.shortName)
    }
    loop.add(observer, mode: mode)
    return observer
}

/// A source that records `name` when performed.
func recordingSource(_ name: String, _ trace: Trace, order: Int = 0, extra: @escaping @Sendable () -> Void = {}) -> LoopSource {
    LoopSource(order: order, label: name) {
        trace.add(name)
        extra()
    }
}

/// A fresh loop on a fresh virtual clock, bound to the calling thread.
func virtualLoop() -> (Loop, VirtualClock) {
    let clock = VirtualClock()
    return (Loop(clock: clock), clock)
}

/// A fresh trace recording every activity of `loop`'s default mode.
func tracing(_ loop: Loop) -> Trace {
    let trace = Trace()
    recordActivities(loop, trace)
    return trace
}

/// `virtualLoop()` with its activities traced (see `tracing(_:)`).
func tracedVirtualLoop() -> (Loop, VirtualClock, Trace) {
    let (loop, clock) = virtualLoop()
    return (loop, clock, tracing(loop))
}

/// Open file descriptors of the process.
func openDescriptorCount() -> Int {
    guard let dir = opendir("/proc/self/fd") else { return -1 }
    defer { closedir(dir) }
    var count = 0
    while readdir(dir) != nil { count += 1 }
    return count - 3  // ".", ".." and the directory stream itself
}

/// Open eventfd/epoll/timerfd descriptors (the kinds a loop creates) as "fd -> target" strings.
/// Other kinds are left out: the test harness opens and closes pipes and files on its own.
func openDescriptors() -> Set<String> {
    guard let dir = opendir("/proc/self/fd") else { return [] }
    defer { closedir(dir) }
    var result: Set<String> = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard name != ".", name != ".." else { continue }
        var target = [CChar](repeating: 0, count: 256)
        let n = readlink("/proc/self/fd/" + name, &target, 255)
        let text = n > 0 ? String(decoding: target.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        result.insert("\(name) -> \(text)")
    }
    return result.filter { $0.contains("anon_inode:") }
}

/// Writes one line to fd 2 (exit-test children report their measurements there).
func printToStderr(_ line: String) {
    let text = line + "\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
}

/// Threads of the process (entries of /proc/self/task).
func threadCount() -> Int {
    guard let dir = opendir("/proc/self/task") else { return -1 }
    defer { closedir(dir) }
    var count = 0
    while readdir(dir) != nil { count += 1 }
    return count - 2
}

/// Starts `body` on a new pthread; `join()` waits for it.
final class BackgroundThread: Sendable {
    private let thread: pthread_t
    init(_ body: @escaping @Sendable () -> Void) { thread = startPThread(body) }
    func join() { pthread_join(thread, nil) }
}

/// A one-shot signal between threads: `wait` blocks on a condition until `set`, with a deadline.
final class Flag: @unchecked Sendable {  // `value` is guarded by `lock`; `changed` waits on it
    private let lock = PThreadMutex()
    private let changed = PThreadCondition()
    private var value = false

    func set() {
        lock.withLock {
            value = true
            changed.broadcast()
        }
    }

    var isSet: Bool { lock.withLock { value } }

    /// Waits until set or until `limit` passes, whichever comes first; says nothing either way.
    func waitQuietly(for limit: Duration) {
        let deadline = MonotonicClock.shared.now.advanced(by: limit).nanoseconds
        lock.withLock {
            while !value {
                guard changed.wait(lock, untilMonotonicNanoseconds: deadline) else { return }
            }
        }
    }

    /// Waits until set; after `limit` (10 s unless given) records an issue saying what did not
    /// happen (nothing hangs).
    func wait(_ what: @autoclosure () -> String = "the flag was not set", limit: Duration = .seconds(10)) {
        let deadline = MonotonicClock.shared.now.advanced(by: limit).nanoseconds
        let set = lock.withLock { () -> Bool in
            while !value {
                guard changed.wait(lock, untilMonotonicNanoseconds: deadline) else { return value }
            }
            return true
        }
        if !set { Issue.record("waited \(limit): \(what())") }
    }
}
