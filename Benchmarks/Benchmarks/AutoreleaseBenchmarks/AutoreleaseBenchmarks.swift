// The autorelease pool beside a naive Swift pool (an `[AnyObject]` with append + removeAll),
// measured in the same run. Wall clock per operation (scaling factor kilo: each sample is
// 1000 operations) and mallocs: the pool must not allocate per operation; only a new page
// (4096 bytes, 505 slots) is a malloc.
//
//   cd Benchmarks && swift package benchmark --target AutoreleaseBenchmarks

import Autorelease
import Benchmark

/// What gets autoreleased.
final class Payload {}

/// The baseline the issue asks for: a plain array of strong references with a stack of marks.
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

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(metrics: [.wallClock, .mallocCountTotal], scalingFactor: .kilo)

    // MARK: autorelease of an owned reference (target <= 3.5 ns/op)

    Benchmark("Autorelease: owned reference, autorelease(consuming:)", configuration: configuration) { benchmark in
        measureOwnedHandOver(benchmark)
    }

    // Diagnostic twin of the benchmark above: the same hand-over with coalescing off, so the
    // difference is the price of objc4's LRU scan of the 4 most recent slots.
    Benchmark("Autorelease: owned reference, autorelease(consuming:), coalescing off",
              configuration: configuration) { benchmark in
        let saved = AutoreleasePool.configuration
        AutoreleasePool.configuration.coalescing = .off
        measureOwnedHandOver(benchmark)
        AutoreleasePool.configuration = saved
    }

    Benchmark("Naive pool: owned reference, append", configuration: configuration) { benchmark in
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

    Benchmark("Autorelease: borrowed reference, autorelease(_:) (retains)", configuration: configuration) { benchmark in
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

    // MARK: push + pop of an empty pool (target <= 12 ns)

    Benchmark("Autorelease: empty push + pop", configuration: configuration) { benchmark in
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

    Benchmark("Naive pool: empty push + pop", configuration: configuration) { benchmark in
        var pool = NaivePool()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            pool.push()
            pool.pop()
        }
        benchmark.stopMeasurement()
        blackHole(pool.objects.count)
    }

    // MARK: autorelease + pop with deallocation per object

    Benchmark("Autorelease: new object, autorelease + pop (dealloc)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Payload())
            AutoreleasePool.pop(token)
        }
    }

    Benchmark("Naive pool: new object, append + removeAll (dealloc)", configuration: configuration) { benchmark in
        var pool = NaivePool()
        for _ in benchmark.scaledIterations {
            pool.autorelease(Payload())
            pool.removeAll()
        }
    }

    Benchmark("Autorelease: 1000 new objects, then one pop (dealloc)", configuration: configuration) { benchmark in
        let token = AutoreleasePool.push()
        for _ in benchmark.scaledIterations { AutoreleasePool.autorelease(consuming: Payload()) }
        AutoreleasePool.pop(token)
    }

    Benchmark("Naive pool: 1000 new objects, then removeAll (dealloc)", configuration: configuration) { benchmark in
        var pool = NaivePool()
        for _ in benchmark.scaledIterations { pool.autorelease(Payload()) }
        pool.removeAll()
    }

    // MARK: coalesced autorelease (one object, many autoreleases)

    Benchmark("Autorelease: same object 1000x (coalesced, LRU)", configuration: configuration) { benchmark in
        let object = Payload()
        let token = AutoreleasePool.push()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { AutoreleasePool.autorelease(object) }
        benchmark.stopMeasurement()
        AutoreleasePool.pop(token)
    }

    Benchmark("Naive pool: same object 1000x", configuration: configuration) { benchmark in
        let object = Payload()
        var pool = NaivePool()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { pool.autorelease(object) }
        benchmark.stopMeasurement()
        pool.removeAll()
    }
}
