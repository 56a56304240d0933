import PThreads

/// One count per producer thread, written by its producer and read by the loop thread.
final class SoakCounters: Sendable {
    private let counts: Locked<[Int]>
    init(_ producers: Int) { counts = Locked([Int](repeating: 0, count: producers)) }
    func set(_ producer: Int, _ value: Int) { counts.withLock { $0[producer] = value } }
    var all: [Int] { counts.withLock { $0 } }
}
