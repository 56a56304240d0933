/// A connection's write buffer: bytes read and not yet sent, consumed from the front.
struct UnsentBytes {
    private var storage: [UInt8] = []
    private var start = 0

    var count: Int { storage.count - start }
    var isEmpty: Bool { start == storage.count }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if start > 0 && start * 2 >= storage.count {
            storage.removeFirst(start)   // compact before growing: memory stays near the high-water mark
            start = 0
        }
        storage.append(contentsOf: bytes)
    }

    /// Runs `body` with the unsent bytes; drops the first `n` it returns.
    mutating func consume(_ body: (UnsafeRawBufferPointer) -> Int) {
        let sent = storage.withUnsafeBytes { raw in body(UnsafeRawBufferPointer(rebasing: raw[start...])) }
        start += sent
        if start == storage.count {
            // Drained: keep a small allocation for the next burst, give a large one back.
            if storage.capacity > 64 * 1024 { storage = [] } else { storage.removeAll(keepingCapacity: true) }
            start = 0
        }
    }
}
