/// The server's open connections, by descriptor: an array indexed by the fd number (the kernel
/// hands out the lowest free numbers, so it stays dense), 8 bytes a slot where a dictionary
/// entry costs several times that.
struct ConnectionTable {
    private var slots: [EchoConnection?] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func insert(_ connection: EchoConnection) {
        let index = Int(connection.fd)
        if index >= slots.count { slots.append(contentsOf: repeatElement(nil, count: index + 1 - slots.count)) }
        if slots[index] == nil { count += 1 }
        slots[index] = connection
    }

    /// Removes `connection` (and nothing else: its fd's slot may be taken by a newer one).
    mutating func remove(_ connection: EchoConnection) {
        let index = Int(connection.fd)
        guard index < slots.count, slots[index] === connection else { return }
        slots[index] = nil
        count -= 1
    }

    /// The connections now, as an array (safe to close them while walking it).
    var all: [EchoConnection] { slots.compactMap { $0 } }
}
