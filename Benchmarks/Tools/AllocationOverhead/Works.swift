// The works, the same operations as the package-benchmark rows they stand for
// (Benchmarks/LoopBenchmarks/PollingPass.swift, and every autorelease row of ours in
// Benchmarks/AutoreleaseBenchmarks). Each runs a chunk of `operations`, times only what the
// benchmark times, and checks its own result.

import Autorelease
import BenchPasses
import Glibc
import LoopAllocationCounter
import RunLoopCore

/// Stops the tool with a message: a work that did not do what it should measures nothing.
func fail(_ message: String) -> Never {
    print("allocation-overhead: \(message)")
    exit(1)
}

/// Callouts made by the polling pass's performed block. nonisolated(unsafe): the tool runs on
/// one thread, and the loop calls the block out on that thread. `@exclusivity(unchecked)`: the
/// count is the harness's, and its run-time exclusivity check would only add noise to the ratio.
@exclusivity(unchecked) nonisolated(unsafe) var calloutCount = 0

/// What gets autoreleased.
final class Payload {}

/// One measured work: `run(operations)` makes one chunk and returns its measured nanoseconds.
struct Work {
    let name: String
    /// Operations one figure is divided by, per chunk operation (1,000 for the 1,000-object work).
    let unitsPerOperation: Int
    /// Allocations each operation makes in the user bucket (checked in counting mode).
    let userAllocationsPerOperation: Int
    /// False when nothing in the work allocates, pool pages included (sampling must take no sample).
    var allocatesAnything = true
    let run: (_ operations: Int) -> UInt64
}

/// Polling pass + 1 callout, 0 hooks: perform one block, run the default mode with timeout 0.
func pollingPassWork() -> Work {
    let loop = Loop.current
    let bump: @Sendable () -> Void = { calloutCount &+= 1 }
    return Work(name: "polling pass + 1 callout, 0 hooks · Loop", unitsPerOperation: 1,
                userAllocationsPerOperation: 0, allocatesAnything: false) { operations in
        let before = calloutCount
        let start = monotonicNanoseconds()
        for _ in 0..<operations {
            loop.perform(inMode: .default, label: "allocation-overhead", bump)
            loop.run(mode: .default, timeout: 0)
        }
        let elapsed = monotonicNanoseconds() - start
        if calloutCount - before != operations {
            fail("polling pass: \(calloutCount - before) callouts in \(operations) passes, expected one per pass")
        }
        return elapsed
    }
}

/// Times `operations` calls of `autoreleaseOne(index)` into one pool, pushed before and popped
/// after the timing, and checks that the pool held one pending release per call. Inlined, so
/// the timed loop makes no closure call.
@inline(__always)
func timedAutoreleases(_ operations: Int, _ what: String, _ autoreleaseOne: (Int) -> Void) -> UInt64 {
    let token = AutoreleasePool.push()
    let pendingBefore = AutoreleasePool.statistics.pendingReleases
    let start = monotonicNanoseconds()
    for index in 0..<operations { autoreleaseOne(index) }
    let elapsed = monotonicNanoseconds() - start
    let pending = AutoreleasePool.statistics.pendingReleases - pendingBefore
    AutoreleasePool.pop(token)
    if pending != operations { fail("\(what): \(pending) releases pending after \(operations) autoreleases") }
    return elapsed
}

/// Autorelease of a borrowed object (the pool retains); push before and pop after are not timed.
func borrowedObjectWork() -> Work {
    var objects: [Payload] = []
    return Work(name: "autorelease, borrowed object (retain + autorelease) · Autorelease", unitsPerOperation: 1,
                userAllocationsPerOperation: 0) { operations in
        // Grown in pairedRun's first chunk, which is "off", so no counted chunk sees these
        // allocations.
        while objects.count < operations { objects.append(Payload()) }
        return timedAutoreleases(operations, "borrowed object") { _ = AutoreleasePool.autorelease(objects[$0]) }
    }
}

/// Autorelease of a retained object whose reference is handed over (no retain by the pool);
/// push before and pop after are not timed.
func handedOverObjectWork() -> Work {
    var objects: [Payload] = []
    var references: [Unmanaged<Payload>] = []
    return Work(name: "autorelease, retained object handed over · Autorelease", unitsPerOperation: 1,
                userAllocationsPerOperation: 0) { operations in
        // Grown in pairedRun's first chunk, which is "off", as the borrowed object's.
        while objects.count < operations { objects.append(Payload()) }
        if references.count < operations { references = objects.map { Unmanaged.passUnretained($0) } }
        // The references the pool takes over: a retain each, made before the timing.
        for index in 0..<operations { _ = references[index].retain() }
        return timedAutoreleases(operations, "handed-over object") {
            AutoreleasePool.autorelease(consuming: references[$0].takeRetainedValue())
        }
    }
}

/// An empty push + pop on a thread that already has a page (an outer pool holds one object).
func emptyPushPopWork() -> Work {
    let held = Payload()
    return Work(name: "empty push + pop · Autorelease", unitsPerOperation: 1,
                userAllocationsPerOperation: 0) { operations in
        let outer = AutoreleasePool.push()
        _ = AutoreleasePool.autorelease(held)  // gives the thread its hot page, outside the timing
        let pendingBefore = AutoreleasePool.statistics.pendingEntries
        let start = monotonicNanoseconds()
        for _ in 0..<operations {
            let token = AutoreleasePool.push()
            AutoreleasePool.pop(token)
        }
        let elapsed = monotonicNanoseconds() - start
        let pendingAfter = AutoreleasePool.statistics.pendingEntries
        AutoreleasePool.pop(outer)
        if pendingAfter != pendingBefore { fail("empty push + pop: \(pendingAfter - pendingBefore) entries left pending") }
        return elapsed
    }
}

/// The same object autoreleased over and over into one pool; push and pop are not timed.
func sameObjectWork() -> Work {
    let object = Payload()
    return Work(name: "same object autoreleased 1000x · Autorelease", unitsPerOperation: 1,
                userAllocationsPerOperation: 0) { operations in
        timedAutoreleases(operations, "same object") { _ in _ = AutoreleasePool.autorelease(object) }
    }
}

/// A fresh object per pool: push, allocate, autorelease, pop (the object's deallocation included).
func freshObjectPerPoolWork() -> Work {
    Work(name: "fresh object, push + autorelease + pop (dealloc) · Autorelease", unitsPerOperation: 1,
         userAllocationsPerOperation: 1) { operations in
        let pendingBefore = AutoreleasePool.statistics.pendingEntries
        let start = monotonicNanoseconds()
        for _ in 0..<operations {
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Payload())
            AutoreleasePool.pop(token)
        }
        let elapsed = monotonicNanoseconds() - start
        let pendingAfter = AutoreleasePool.statistics.pendingEntries
        if pendingAfter != pendingBefore { fail("fresh object per pool: \(pendingAfter - pendingBefore) entries left pending") }
        return elapsed
    }
}

/// 1,000 fresh objects autoreleased, then one pop; figures are per object.
func thousandFreshObjectsWork() -> Work {
    let objectsPerPool = 1000
    return Work(name: "1000 fresh objects, then one pop (dealloc) · Autorelease, per object",
                unitsPerOperation: objectsPerPool, userAllocationsPerOperation: objectsPerPool) { operations in
        let pendingBefore = AutoreleasePool.statistics.pendingEntries
        let start = monotonicNanoseconds()
        for _ in 0..<operations {
            let token = AutoreleasePool.push()
            for _ in 0..<objectsPerPool { AutoreleasePool.autorelease(consuming: Payload()) }
            AutoreleasePool.pop(token)
        }
        let elapsed = monotonicNanoseconds() - start
        let pendingAfter = AutoreleasePool.statistics.pendingEntries
        if pendingAfter != pendingBefore { fail("1000 fresh objects: \(pendingAfter - pendingBefore) entries left pending") }
        return elapsed
    }
}
