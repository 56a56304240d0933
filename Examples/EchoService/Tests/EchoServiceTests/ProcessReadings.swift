import RunLoopKit
#if canImport(Glibc)
import Glibc
#endif

/// What the load tests read from /proc to show nothing leaked. Other suites run in parallel in
/// the same process, so the counts are narrowed to what the echo tests own.
enum ProcessReadings {
    /// Entries of a /proc directory, without "." and "..".
    static func entries(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func text(_ path: String) -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk.prefix(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// What each open descriptor refers to ("socket:[123]", "anon_inode:[eventfd]", a path), by number.
    static func descriptorTargets() -> [String: String] {
        var targets: [String: String] = [:]
        for name in entries("/proc/self/fd") {
            var target = [CChar](repeating: 0, count: 128)
            let count = readlink("/proc/self/fd/" + name, &target, 127)
            guard count > 0 else { continue }
            targets[name] = String(decoding: target.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return targets
    }

    /// Socket inodes this process holds open.
    static func socketInodes() -> Set<String> {
        Set(descriptorTargets().values.filter { $0.hasPrefix("socket:[") }.map { String($0.dropFirst(8).dropLast()) })
    }

    /// TCP sockets this process holds whose local or remote port is `port` (IPv4, /proc/net/tcp).
    static func openSockets(port: UInt16) -> Int {
        let mine = socketInodes()
        let hex = String(port, radix: 16, uppercase: true)
        let suffix = ":" + String(repeating: "0", count: 4 - hex.count) + hex
        return text("/proc/net/tcp").split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            guard fields.count > 9 else { return false }
            return (fields[1].hasSuffix(suffix) || fields[2].hasSuffix(suffix)) && mine.contains(String(fields[9]))
        }.count
    }

    static var threadCount: Int { entries("/proc/self/task").count }

    static var residentBytes: Int { ProcessMemory.residentBytes() }
}
