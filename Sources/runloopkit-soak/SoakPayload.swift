import Synchronization

/// An autoreleased object with a malloc'd block: one the pools failed to release stays `live`.
final class SoakPayload {
    static let live = Atomic<Int>(0)
    private let bytes = [UInt8](repeating: 1, count: 64)
    init() { SoakPayload.live.add(1, ordering: .relaxed) }
    deinit { SoakPayload.live.subtract(1, ordering: .relaxed) }
}
