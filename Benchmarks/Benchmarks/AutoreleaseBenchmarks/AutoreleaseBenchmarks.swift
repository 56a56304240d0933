// The autorelease pool beside a naive Swift pool (an `[AnyObject]` with append + removeAll)
// and GNUstep base's NSAutoreleasePool (driven from C through the GNU Objective-C runtime, see
// Support/CGNUstepPeer), measured in the same run. Names read "<work> · <implementation>".
// Wall clock per operation (scaling factor kilo: each sample is 1000 operations) and mallocs:
// the pool must not allocate per operation; only a new page (4096 bytes, 505 slots) is a malloc.
//
//   cd Benchmarks && swift package benchmark --target AutoreleaseBenchmarks

import Autorelease
import BenchOrder
import Benchmark
import CGNUstepPeer
#if canImport(Glibc)
import Glibc
#endif

/// How long each benchmark may sample: 1 s (the default), or the seconds in RUNLOOPKIT_BENCH_SECONDS (the
/// short CI subset sets it lower).
let maxSampling: Duration = {
    guard let text = getenv("RUNLOOPKIT_BENCH_SECONDS").map({ String(cString: $0) }),
          let seconds = Double(text), seconds > 0 else { return .seconds(1) }
    return .milliseconds(Int(seconds * 1000))
}()

/// What gets autoreleased.
final class Payload {}

/// The baseline the issue asks for: a plain array of strong references with a stack of marks.
/// Its arrays are reserved when it is made, outside the measured span. It sits in this module,
/// as a user's own pool would sit in theirs: inlined from another module, its empty push + pop
/// ran 2.4× slower here (7.9 ns against 3.3), and a pool that a loop reaches through a
/// closure's capture or an `inout` parameter is reloaded from memory after every allocation and
/// release. Tools/PoolPairs/Works.swift keeps the same pool for the paired tool.
struct NaivePool {
    var objects: [AnyObject] = []
    var marks: [Int] = []

    init() {
        objects.reserveCapacity(4096)
        marks.reserveCapacity(64)
    }

    mutating func push() { marks.append(objects.count) }
    mutating func autorelease(_ object: AnyObject) { objects.append(object) }
    mutating func pop() { objects.removeSubrange(marks.removeLast()...) }
    mutating func removeAll() { objects.removeAll(keepingCapacity: true) }

    /// The fresh-object work: push, a new object, pop (which frees it).
    @inline(__always)
    mutating func freshObjectInOwnPool() {
        push()
        autorelease(Payload())
        pop()
    }

    /// 1,000 new objects, then all released at once.
    @inline(__always)
    mutating func thousandFreshObjectsThenPop() {
        for _ in 0..<1000 { autorelease(Payload()) }
        removeAll()
    }
}

/// Operations run before the measured span by both sides of the fresh-object works (and
/// GNUstep's), so that the pool's page, the naive pool's arrays and the heap are warm on each.
let warmUpOperations = 1000

/// The fresh-object work on the library's pool: push, a new object, pop (which frees it).
@inline(__always)
func freshObjectInOwnPool() {
    let token = AutoreleasePool.push()
    AutoreleasePool.autorelease(consuming: Payload())
    AutoreleasePool.pop(token)
}

/// 1,000 new objects in one pool of the library's, then one pop.
@inline(__always)
func thousandFreshObjectsThenPop() {
    let token = AutoreleasePool.push()
    for _ in 0..<1000 { AutoreleasePool.autorelease(consuming: Payload()) }
    AutoreleasePool.pop(token)
}

/// Owned references made before the measurement, so the loop measures only the hand-over.
final class OwnedReferences {
    let objects: [Payload]
    let owned: UnsafeMutablePointer<Unmanaged<Payload>>

    init(count: Int) {
        objects = (0..<count).map { _ in Payload() }
        owned = .allocate(capacity: count)
        for index in 0..<count { owned[index] = .passRetained(objects[index]) }
    }

    deinit { owned.deallocate() }
}

/// Hands one owned reference per iteration to a fresh pool; only the hand-over is measured.
func measureOwnedHandOver(_ benchmark: Benchmark) {
    let references = OwnedReferences(count: benchmark.scaledIterations.count)
    let token = AutoreleasePool.push()
    benchmark.startMeasurement()
    for index in benchmark.scaledIterations {
        AutoreleasePool.autorelease(consuming: references.owned[index].takeRetainedValue())
    }
    benchmark.stopMeasurement()
    AutoreleasePool.pop(token)
    blackHole(references)
}

/// The implementation names of this target.
let ours = "Autorelease"
let naive = "naive Swift pool"
let gnustep = "GNUstep NSAutoreleasePool"
/// The floors: the Swift runtime work a row holds that no pool can avoid, measured without a pool.
let allocAlone = "object alloc + dealloc alone (no pool)"
let retainAlone = "retain alone (no pool)"

/// The floor row's buffer, allocated once per process and never freed. nonisolated(unsafe):
/// benchmarks run one at a time on one thread.
nonisolated(unsafe) var floorStorage: UnsafeMutablePointer<Payload>?
nonisolated(unsafe) var floorCapacity = 0

func floorBuffer(_ count: Int) -> UnsafeMutablePointer<Payload> {
    if let floorStorage, floorCapacity >= count { return floorStorage }
    floorStorage = .allocate(capacity: count)
    floorCapacity = count
    return floorStorage.unsafelyUnwrapped
}

/// Loads GNUstep base for a benchmark, or fails the benchmark with the reason.
func gnustepReady(_ benchmark: Benchmark) -> Bool {
    if bench_gnustep_load() == 0 { return true }
    benchmark.error(String(cString: bench_gnustep_error()))
    return false
}

/// GNUstep objects made before the measurement, each retained once more than the pool takes.
func withGNUstepObjects(_ count: Int, _ body: (UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Void) {
    let objects = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: count)
    bench_gnustep_make_retained(objects, count)
    body(objects)
    bench_gnustep_release_all(objects, count)
    objects.deallocate()
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal], scalingFactor: .kilo, maxDuration: maxSampling
    )

    // MARK: autorelease of a retained object: the reference is handed over (target <= 3.5 ns/op)

    let handOver = "autorelease, retained object handed over"
    Benchmark("\(handOver) · \(ours)", configuration: configuration) { benchmark in
        measureOwnedHandOver(benchmark)
    }

    // Diagnostic twin: the same hand-over with coalescing off, so the difference is the price
    // of objc4's LRU scan of the 4 most recent slots.
    Benchmark("\(handOver) · \(ours), coalescing off", configuration: configuration) { benchmark in
        let saved = AutoreleasePool.configuration
        AutoreleasePool.configuration.coalescing = .off
        measureOwnedHandOver(benchmark)
        AutoreleasePool.configuration = saved
    }

    Benchmark("\(handOver) · \(naive)", configuration: configuration) { benchmark in
        let references = OwnedReferences(count: benchmark.scaledIterations.count)
        var pool = NaivePool()
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            pool.autorelease(references.owned[index].takeRetainedValue())
        }
        benchmark.stopMeasurement()
        pool.removeAll()
        blackHole(references)
    }

    Benchmark("\(handOver) · \(gnustep)", configuration: configuration) { benchmark in
        guard gnustepReady(benchmark) else { return }
        let count = benchmark.scaledIterations.count
        withGNUstepObjects(count) { objects in
            let pool = bench_gnustep_pool_push()
            benchmark.startMeasurement()
            bench_gnustep_autorelease_each(objects, count)
            benchmark.stopMeasurement()
            bench_gnustep_pool_drain(pool)
        }
    }

    // MARK: autorelease of a borrowed reference: the pool retains

    let borrowed = "autorelease, borrowed object (retain + autorelease)"
    Benchmark("\(borrowed) · \(ours)", configuration: configuration) { benchmark in
        let references = OwnedReferences(count: benchmark.scaledIterations.count)
        let token = AutoreleasePool.push()
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            AutoreleasePool.autorelease(references.objects[index])
        }
        benchmark.stopMeasurement()
        AutoreleasePool.pop(token)
        for index in benchmark.scaledIterations { references.owned[index].release() }
    }

    Benchmark("\(borrowed) · \(naive)", configuration: configuration) { benchmark in
        let references = OwnedReferences(count: benchmark.scaledIterations.count)
        var pool = NaivePool()
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations { pool.autorelease(references.objects[index]) }
        benchmark.stopMeasurement()
        pool.removeAll()
        for index in benchmark.scaledIterations { references.owned[index].release() }
    }

    Benchmark("\(borrowed) · \(gnustep)", configuration: configuration) { benchmark in
        guard gnustepReady(benchmark) else { return }
        let count = benchmark.scaledIterations.count
        withGNUstepObjects(count) { objects in
            let pool = bench_gnustep_pool_push()
            benchmark.startMeasurement()
            bench_gnustep_retain_autorelease_each(objects, count)
            benchmark.stopMeasurement()
            bench_gnustep_pool_drain(pool)
        }
    }

    // The floor of the row above: the retain the pool's reference needs, nothing else.
    Benchmark("\(borrowed) · \(retainAlone)", configuration: configuration) { benchmark in
        let references = OwnedReferences(count: benchmark.scaledIterations.count)
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations { _ = Unmanaged.passUnretained(references.objects[index]).retain() }
        benchmark.stopMeasurement()
        for index in benchmark.scaledIterations {
            references.owned[index].release()
            Unmanaged.passUnretained(references.objects[index]).release()
        }
    }

    // MARK: push + pop of an empty pool (target <= 12 ns)

    let emptyPushPop = "empty push + pop"
    Benchmark("\(emptyPushPop) · \(ours)", configuration: configuration) { benchmark in
        let outer = AutoreleasePool.push()
        AutoreleasePool.autorelease(consuming: Payload())   // the thread has a page from here on
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let token = AutoreleasePool.push()
            AutoreleasePool.pop(token)
        }
        benchmark.stopMeasurement()
        AutoreleasePool.pop(outer)
    }

    Benchmark("\(emptyPushPop) · \(naive)", configuration: configuration) { benchmark in
        var pool = NaivePool()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            pool.push()
            pool.pop()
        }
        benchmark.stopMeasurement()
        blackHole(pool.objects.count)
    }

    Benchmark("\(emptyPushPop) · \(gnustep)", configuration: configuration) { benchmark in
        guard gnustepReady(benchmark) else { return }
        let outer = bench_gnustep_pool_push()
        benchmark.startMeasurement()
        bench_gnustep_empty_push_drain(benchmark.scaledIterations.count)
        benchmark.stopMeasurement()
        bench_gnustep_pool_drain(outer)
    }

    // MARK: a fresh object per pool: allocation, autorelease, drain and deallocation
    //
    // Equal work from the caller's side (issue 31): every container exists before the measured
    // span, the naive pool's arrays as the thread's pool page does, and both sides run the same
    // warm-up first. (Made inside the span, the naive pool's 32 KiB array cost it a large
    // malloc and free per sample and glibc a fastbin consolidation, which made its row slower.)
    // The naive pool is a local variable of the closure, its fastest form (see NaivePool).

    let freshOwnPool = "fresh object, push + autorelease + pop (dealloc)"
    Benchmark("\(freshOwnPool) · \(ours)", configuration: configuration) { benchmark in
        for _ in 0..<warmUpOperations { freshObjectInOwnPool() }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { freshObjectInOwnPool() }
        benchmark.stopMeasurement()
    }

    Benchmark("\(freshOwnPool) · \(naive)", configuration: configuration) { benchmark in
        var pool = NaivePool()
        for _ in 0..<warmUpOperations { pool.freshObjectInOwnPool() }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { pool.freshObjectInOwnPool() }
        benchmark.stopMeasurement()
    }

    Benchmark("\(freshOwnPool) · \(gnustep)", configuration: configuration) { benchmark in
        guard gnustepReady(benchmark) else { return }
        let outer = bench_gnustep_pool_push()
        bench_gnustep_fresh_object_own_pool(warmUpOperations)
        benchmark.startMeasurement()
        bench_gnustep_fresh_object_own_pool(benchmark.scaledIterations.count)
        benchmark.stopMeasurement()
        bench_gnustep_pool_drain(outer)
    }

    // The floor: the same object created and freed with no pool (blackHole keeps it on the heap).
    Benchmark("\(freshOwnPool) · \(allocAlone)", configuration: configuration) { benchmark in
        for _ in 0..<warmUpOperations { blackHole(Payload()) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(Payload()) }
        benchmark.stopMeasurement()
    }

    let freshOneDrain = "1000 fresh objects, then one pop (dealloc)"
    Benchmark("\(freshOneDrain) · \(ours)", configuration: configuration) { benchmark in
        thousandFreshObjectsThenPop()
        benchmark.startMeasurement()
        thousandFreshObjectsThenPop()
        benchmark.stopMeasurement()
    }

    Benchmark("\(freshOneDrain) · \(naive)", configuration: configuration) { benchmark in
        var pool = NaivePool()
        pool.thousandFreshObjectsThenPop()
        benchmark.startMeasurement()
        pool.thousandFreshObjectsThenPop()
        benchmark.stopMeasurement()
    }

    Benchmark("\(freshOneDrain) · \(gnustep)", configuration: configuration) { benchmark in
        guard gnustepReady(benchmark) else { return }
        let outer = bench_gnustep_pool_push()
        bench_gnustep_fresh_objects_one_drain(warmUpOperations)
        benchmark.startMeasurement()
        bench_gnustep_fresh_objects_one_drain(benchmark.scaledIterations.count)
        benchmark.stopMeasurement()
        bench_gnustep_pool_drain(outer)
    }

    // The floor: 1000 objects live at once, then all freed, with no pool. The buffer is made
    // once: a large malloc per sample would make glibc consolidate its fastbins (see
    // Benchmarks/NOTES.md, "The pool's instructions").
    Benchmark("\(freshOneDrain) · \(allocAlone)", configuration: configuration) { benchmark in
        let count = benchmark.scaledIterations.count
        let objects = floorBuffer(max(count, warmUpOperations))
        for index in 0..<warmUpOperations { (objects + index).initialize(to: Payload()) }
        objects.deinitialize(count: warmUpOperations)
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations { (objects + index).initialize(to: Payload()) }
        objects.deinitialize(count: count)
        benchmark.stopMeasurement()
    }

    // MARK: coalesced autorelease (one object, many autoreleases)

    let sameObject = "same object autoreleased 1000x"
    Benchmark("\(sameObject) · \(ours)", configuration: configuration) { benchmark in
        let object = Payload()
        let token = AutoreleasePool.push()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { AutoreleasePool.autorelease(object) }
        benchmark.stopMeasurement()
        AutoreleasePool.pop(token)
    }

    Benchmark("\(sameObject) · \(naive)", configuration: configuration) { benchmark in
        let object = Payload()
        var pool = NaivePool()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { pool.autorelease(object) }
        benchmark.stopMeasurement()
        pool.removeAll()
    }
    applyRunOrder()
}
