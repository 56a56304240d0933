// The fresh-object works of pool-pairs (and of Scripts/pool-callgrind.sh, which compiles this
// file into its driver): the library's pool beside the naive Swift pool the issue names as its
// baseline, the same pool and operations as AutoreleaseBenchmarks' (kept in step with it: the
// naive pool must be compiled in the module of the loop that times it, see NaivePool there).
// Every container exists before a measured span (the naive pool's arrays, as the thread's pool
// page does), so both sides do the same work from the caller's side (issue 31); the loop keeps
// the naive pool in a local variable.

import Autorelease

/// What gets autoreleased.
final class Payload {}

/// The baseline the issue asks for: a plain array of strong references with a stack of marks.
/// Its arrays are reserved when it is made, which callers do outside the measured span.
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

/// Operations run before a measured span by both sides of the fresh-object works, so that the
/// pool's page, the naive pool's arrays and the heap are warm on each.
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

extension NaivePool {
    /// The fresh-object work on the naive pool: push, a new object, pop (which frees it).
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
