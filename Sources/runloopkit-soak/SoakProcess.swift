#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the process holds, read from /proc.
enum SoakProcess {
    /// Open descriptors (the directory stream's own excluded).
    static func openDescriptors() -> Int { entries(of: "/proc/self/fd") - 1 }
    /// Threads of the process.
    static func threads() -> Int { entries(of: "/proc/self/task") }

    private static func entries(of path: String) -> Int {
        guard let dir = opendir(path) else { return -1 }
        defer { closedir(dir) }
        var count = 0
        while let entry = readdir(dir) {
            let dot = withUnsafeBytes(of: entry.pointee.d_name) { $0[0] == UInt8(ascii: ".") }
            if !dot { count += 1 }
        }
        return count
    }
}
