#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import PThreads

/// One-time diagnostics on stderr, as CF logs misuse once and carries on.
enum Diagnostics {
    nonisolated(unsafe) private static var emitted: Set<String> = []  // guarded by `lock`
    private static let lock = PThreadMutex()

    /// Prints `message` once per `key` for the whole process; returns whether it printed.
    @discardableResult
    static func once(_ key: String, _ message: @autoclosure () -> String) -> Bool {
        let first = lock.withLock { emitted.insert(key).inserted }
        if first {
            let line = "RunLoopCore: \(message())\n"
            _ = line.utf8.withContiguousStorageIfAvailable { write(2, $0.baseAddress, $0.count) }
        }
        return first
    }

    /// Whether the diagnostic `key` has been printed (tests).
    static func wasEmitted(_ key: String) -> Bool { lock.withLock { emitted.contains(key) } }
}
