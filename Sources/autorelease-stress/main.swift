// A workout for the autorelease pool meant to run under a leak checker:
//
//   swift build --build-path .build-pool --product autorelease-stress
//   valgrind --leak-check=full --error-exitcode=1 .build-pool/debug/autorelease-stress
//
// It pushes, pops, nests, crosses pages, coalesces, defers cleanups, autoreleases during pops,
// leaves pools open at thread exit and uses several threads; then it checks that every object
// was released exactly once and that no page is left, and exits 0 only if so.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Autorelease
import Synchronization

let released = Atomic<Int>(0)
let created = Atomic<Int>(0)

final class Payload {
    let bytes: [UInt8]
    init(size: Int) {
        bytes = [UInt8](repeating: 7, count: size)
        created.add(1, ordering: .relaxed)
    }
    deinit { released.add(1, ordering: .relaxed) }
}

/// Autoreleases more payloads from its deinit (a release during a pop).
final class Chain {
    let remaining: Int
    init(_ remaining: Int) {
        self.remaining = remaining
        created.add(1, ordering: .relaxed)
    }
    deinit {
        released.add(1, ordering: .relaxed)
        if remaining > 0 { AutoreleasePool.autorelease(consuming: Chain(remaining - 1)) }
        AutoreleasePool.autorelease(consuming: Payload(size: 16))
    }
}

func workout(seed: UInt64) {
    var state = seed
    func next(_ bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }
    let stack = AutoreleasePoolStack()
    for round in 0..<300 {
        stack.push()
        let shared = Payload(size: 8)
        for _ in 0..<next(1200) {
            switch next(10) {
            case 0..<5: AutoreleasePool.autorelease(consuming: Payload(size: next(64)))
            case 5..<7: AutoreleasePool.autorelease(shared)
            case 7: AutoreleasePool.deferCleanup { released.add(1, ordering: .relaxed) }; created.add(1, ordering: .relaxed)
            case 8: AutoreleasePool.autorelease(consuming: Chain(next(5)))
            default: stack.push()
            }
        }
        autoreleasepool {
            for _ in 0..<next(600) { AutoreleasePool.autorelease(consuming: Payload(size: 4)) }
        }
        switch round % 4 {
        case 0: stack.popAll()
        case 1: stack.popAndPush()
        default: break
        }
        if stack.depth > 40 { stack.popAll() }
    }
    // Leave some pools open: the thread-exit drain must release them.
    stack.push()
    for _ in 0..<700 { AutoreleasePool.autorelease(consuming: Payload(size: 32)) }
}

final class Seed { let value: UInt64; init(_ value: UInt64) { self.value = value } }

/// Starts a thread running `workout`. Nonisolated: top-level code is main-actor isolated, and
/// the thread entry must not inherit that.
nonisolated func spawnWorkout(seed: UInt64) -> pthread_t {
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { raw in
        let seed = Unmanaged<Seed>.fromOpaque(raw!).takeRetainedValue()
        workout(seed: seed.value)
        return nil
    }, Unmanaged.passRetained(Seed(seed)).toOpaque())
    precondition(status == 0, "pthread_create failed: \(status)")
    return thread
}

let threads = (0..<4).map { spawnWorkout(seed: UInt64($0) &+ 0x5EED) }
for thread in threads { pthread_join(thread, nil) }

/// The main thread too, popping everything itself (its cold page stays until exit, as in objc4).
func mainThreadWorkout() -> AutoreleasePool.Statistics {
    let token = AutoreleasePool.push()
    workout(seed: 99)
    AutoreleasePool.pop(token)
    let afterPop = AutoreleasePool.statistics
    // The main thread never runs its thread-exit drain; free the cold page for the leak check.
    AutoreleasePool.drainThread()
    return afterPop
}
let mainStatistics = mainThreadWorkout()

let totals = AutoreleasePool.processStatistics
let made = created.load(ordering: .relaxed)
let freed = released.load(ordering: .relaxed)
print("autorelease-stress: \(made) objects and cleanups, \(freed) released; main thread \(mainStatistics)")
print("autorelease-stress: process peak \(totals.peakBytes) bytes in pages, \(totals.peakEntries) entries")
guard made == freed, mainStatistics.pendingEntries == 0, mainStatistics.pages == 1, totals.pages == 0 else {
    print("autorelease-stress: FAILED (created \(made), released \(freed), pages left \(totals.pages))")
    exit(1)
}
print("autorelease-stress: OK")
