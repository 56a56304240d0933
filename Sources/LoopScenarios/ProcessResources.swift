#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Counts of process resources a scenario must give back: open descriptors and threads.
/// Only meaningful when nothing else in the process opens descriptors or starts threads
/// meanwhile (`ScenarioOptions.processIsQuiet`).
///
/// ```swift
/// let before = ProcessResources.openDescriptors()
/// // … start and join a thread with a loop …
/// #expect(ProcessResources.openDescriptors() == before)
/// ```
enum ProcessResources {
    /// Entries of /proc/self/fd (the directory's own descriptor excluded), or -1.
    static func openDescriptors() -> Int {
        count(entriesOf: "/proc/self/fd").map { $0 - 1 } ?? -1
    }

    /// Entries of /proc/self/task (one per thread), or -1.
    static func threads() -> Int {
        count(entriesOf: "/proc/self/task") ?? -1
    }

    private static func count(entriesOf path: String) -> Int? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var count = 0
        while let entry = readdir(dir) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                raw[0] == UInt8(ascii: ".") && (raw[1] == 0 || (raw[1] == UInt8(ascii: ".") && raw[2] == 0))
            }
            if !isDot { count += 1 }
        }
        return count
    }
}
