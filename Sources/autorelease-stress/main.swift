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

/// Owns a malloc'd block, so a payload the pool failed to release shows up as "definitely lost".
final class Payload {
    let bytes: UnsafeMutableRawPointer
    init(size: Int) {
        bytes = malloc(max(size, 1))!
        created.add(1, ordering: .relaxed)
    }
    deinit {
        free(bytes)
        released.add(1, ordering: .relaxed)
    }
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
        withAutoreleasePool {
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

// Fixed storage rather than arrays and string interpolation: the Swift runtime caches the generic
// metadata those instantiate with interior pointers, which valgrind reports as "possibly lost".
let threads = UnsafeMutablePointer<pthread_t>.allocate(capacity: 4)
for index in 0..<4 { threads[index] = spawnWorkout(seed: UInt64(index) &+ 0x5EED) }
for index in 0..<4 {
    let status = pthread_join(threads[index], nil)
    precondition(status == 0, "pthread_join failed: \(status)")
}
threads.deallocate()

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

/// Writes a static text and a number to standard output without building a String.
func report(_ text: StaticString, _ number: Int) {
    _ = write(1, text.utf8Start, text.utf8CodeUnitCount)
    let digits = UnsafeMutablePointer<UInt8>.allocate(capacity: 24)
    var value = number
    var count = 0
    repeat {
        digits[23 - count] = UInt8(48 + value % 10)
        value /= 10
        count += 1
    } while value > 0
    digits[23 - count] = 32
    _ = write(1, digits + 23 - count, count + 1)
    digits.deallocate()
    _ = write(1, "\n", 1)
}

let totals = AutoreleasePool.processStatistics
let made = created.load(ordering: .relaxed)
let freed = released.load(ordering: .relaxed)
report("autorelease-stress: objects and cleanups created:", made)
report("autorelease-stress: released:", freed)
report("autorelease-stress: main thread pending entries after its pop:", mainStatistics.pendingEntries)
report("autorelease-stress: process peak bytes in pages:", totals.peakBytes)
report("autorelease-stress: pages left:", totals.pages)
guard made == freed, mainStatistics.pendingEntries == 0, mainStatistics.pages == 1, totals.pages == 0 else {
    report("autorelease-stress: FAILED, unreleased:", made - freed)
    exit(1)
}
report("autorelease-stress: OK, leaked objects:", 0)
