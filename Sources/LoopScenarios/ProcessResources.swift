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
        entries(of: "/proc/self/fd").map { $0.count - 1 } ?? -1
    }

    /// The ids of the process's threads (the entries of /proc/self/task); empty if unreadable.
    static func threadIDs() -> Set<String> {
        Set(entries(of: "/proc/self/task") ?? [])
    }

    /// The process's thread ids once every one of them is in `known`, or at `limit` whatever
    /// they are. A thread that `pthread_join` has returned for keeps its entry in
    /// /proc/self/task for a moment, until the kernel releases its task; so does one joined
    /// just before `known` was read, which then leaves it. Busy, with `sched_yield`: the
    /// entries go within microseconds unless a thread really stayed.
    static func threadIDs(within limit: Duration, allIn known: Set<String>) -> Set<String> {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while true {
            let ids = threadIDs()
            if ids.isSubset(of: known) || ContinuousClock.now >= deadline { return ids }
            sched_yield()
        }
    }

    /// The names in the directory `path` other than "." and "..", or nil if it cannot be opened.
    private static func entries(of path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
