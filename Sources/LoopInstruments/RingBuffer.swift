/// Fixed-capacity FIFO that overwrites its oldest element when full, so a long-running
/// recorder keeps the most recent history in bounded memory.
struct RingBuffer<Element> {
    private var storage: ContiguousArray<Element> = []
    private var head = 0            // index of the oldest element once `storage` is full
    let capacity: Int
    private(set) var overwritten: UInt64 = 0

    init(capacity: Int) {
        precondition(capacity > 0, "RingBuffer capacity must be positive, got \(capacity)")
        self.capacity = capacity
    }

    var count: Int { storage.count }

    mutating func append(_ element: Element) {
        if storage.count < capacity {
            storage.append(element)
        } else {
            storage[head] = element
            head = (head + 1) % capacity
            overwritten += 1
        }
    }

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Oldest first.
    var elements: [Element] {
        if head == 0 { return Array(storage) }
        return Array(storage[head...]) + Array(storage[..<head])
    }
}
