// Shared helpers: fresh threads (pool tests need a thread with no pool history), objects that
// log their deinit, and a parser for the debug print.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Autorelease
import PThreads

/// An append-only log of ids. Used by one thread at a time: the thread that runs the test body,
/// then (after pthread_join, which orders memory) the test itself.
final class Log {
    var ids: [Int] = []
    func append(_ id: Int) { ids.append(id) }
}

/// An object that records its deinit.
final class Tracked {
    let id: Int
    let log: Log
    init(_ id: Int, _ log: Log) {
        self.id = id
        self.log = log
    }
    deinit { log.append(id) }
}

/// An object whose deinit autoreleases more objects (behaviour 6).
final class Spawner {
    let id: Int
    let log: Log
    let spawn: [Int]
    init(_ id: Int, _ log: Log, spawning spawn: [Int]) {
        self.id = id
        self.log = log
        self.spawn = spawn
    }
    deinit {
        log.append(id)
        for child in spawn { AutoreleasePool.autorelease(consuming: Tracked(child, log)) }
    }
}

/// A body and its result, handed to the new thread. `@unchecked Sendable`: the creating thread
/// reads `result` only after pthread_join, which orders it after the thread's write.
private final class ThreadBody<R>: @unchecked Sendable {
    let body: () -> R
    var result: R?
    init(_ body: @escaping () -> R) { self.body = body }
    func run() { result = body() }
}

/// Runs `body` on a new pthread (no pool history) with the given stack size, waits for it to
/// exit (its pool is drained by then) and returns the body's result.
func onFreshThread<R>(stackSize: Int = 1 << 20, _ body: () -> R) -> R {
    withoutActuallyEscaping(body) { escapable in
        let context = ThreadBody(escapable)
        runOnNewPThread(stackSize: stackSize) { context.run() }
        return context.result!
    }
}

/// Runs `body` on `count` new threads at once and returns their results in thread order.
func onFreshThreads<R>(_ count: Int, _ body: (Int) -> R) -> [R] {
    withoutActuallyEscaping(body) { escapable in
        let contexts = (0..<count).map { index in ThreadBody { escapable(index) } }
        let threads = contexts.map { context in startPThread { context.run() } }
        for thread in threads { pthread_join(thread, nil) }
        return contexts.map { $0.result! }
    }
}

/// One page of the debug print: its header flags and its slot lines.
struct PrintedPage {
    var header: String
    var slots: [String]
}

/// Parses `AutoreleasePool.debugLines()` into pages.
func printedPages() -> [PrintedPage] {
    var pages: [PrintedPage] = []
    for line in AutoreleasePool.debugLines() {
        if line.contains("  PAGE ") {
            pages.append(PrintedPage(header: line, slots: []))
        } else if line.hasPrefix("["), !pages.isEmpty {
            pages[pages.count - 1].slots.append(line)
        }
    }
    return pages
}

/// The slot index of a token inside its page.
func slotIndex(_ address: UInt) -> Int { Int((address & 4095) - 56) / 8 }

/// The word stored at `address` (a slot of a live page of the calling thread).
func word(at address: UInt) -> UInt { UnsafeRawPointer(bitPattern: address)!.load(as: UInt.self) }

/// A small deterministic generator (SplitMix64), so random tests replay exactly.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
