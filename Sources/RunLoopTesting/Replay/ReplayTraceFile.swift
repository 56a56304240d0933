#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RunLoopKit

extension ReplayTrace {
    /// Writes ``text`` to `path` (parent directories created).
    ///
    /// ```swift
    /// try trace.write(to: "traces/seed.rlktrace")
    /// ```
    public func write(to path: String) throws(OutputFile.WriteError) {
        try OutputFile.write(text, to: path)
    }

    /// Reads and parses the trace file at `path`.
    ///
    /// ```swift
    /// let trace = try ReplayTrace(contentsOfFile: "traces/seed.rlktrace")
    /// ```
    public init(contentsOfFile path: String) throws(ReplayTraceFileError) {
        let bytes = try Self.readBytes(path)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8(path: path) }
        do { self = try ReplayTrace(parsing: text) } catch { throw .malformed(path: path, error) }
    }

    private static func readBytes(_ path: String) throws(ReplayTraceFileError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotRead(path: path, errno: errno) }
        defer { _ = close(fd) }   // read-only: a failed close loses nothing
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(path: path, errno: errno)
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
    }
}

/// Why a trace file could not be read: the file itself, or its contents (with line and field).
public enum ReplayTraceFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `open` or `read` failed with this errno.
    case cannotRead(path: String, errno: Int32)
    /// The file is not UTF-8 text.
    case notUTF8(path: String)
    /// The text is not a valid trace.
    case malformed(path: String, ReplayTraceError)

    public var description: String {
        switch self {
        case .cannotRead(let path, let code): return "cannot read \(path): \(String(cString: strerror(code)))"
        case .notUTF8(let path): return "\(path): not UTF-8 text"
        case .malformed(let path, let error): return "\(path): \(error)"
        }
    }
}
