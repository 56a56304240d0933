#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing an export to disk without Foundation.
///
/// ```swift
/// try OutputFile.write(recorder.chromeTraceJSON(), to: "runloopkit-out/seed.json")
/// ```
public enum OutputFile {
    public struct WriteError: Error, CustomStringConvertible {
        public let path: String
        public let errno: Int32
        public var description: String { "cannot write \(path): \(String(cString: strerror(errno)))" }
    }

    /// Creates or truncates `path` (mode 0644) and writes `text` as UTF-8.
    /// Creates missing parent directories.
    public static func write(_ text: String, to path: String) throws(WriteError) {
        try makeParentDirectories(of: path)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw WriteError(path: path, errno: errno) }
        defer { close(fd) }
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { raw in
                Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw WriteError(path: path, errno: errno)
            }
            offset += n
        }
    }

    private static func makeParentDirectories(of path: String) throws(WriteError) {
        var prefix = ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        for (index, part) in parts.enumerated() {
            prefix += (index == 0 ? "" : "/") + part
            guard !prefix.isEmpty, part != "." , part != ".." else { continue }
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST { throw WriteError(path: prefix, errno: errno) }
        }
    }
}
