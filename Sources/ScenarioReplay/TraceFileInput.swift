package import RunLoopTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A trace file named on the command line (`runloopkit replay`, `runloopkit explain`), read
/// with limits: what is not a regular file is refused before anything is read (a FIFO with no
/// writer cannot hang the reader, `/dev/zero` cannot fill the memory), as is a file over
/// ``maximumFileSize`` or with a line over ``maximumLineLength``. Lines may end in LF or CRLF
/// (an editor's CRLF is read as LF).
///
/// ```swift
/// let trace = try TraceFileInput.read("seed.rlktrace")
/// ```
package enum TraceFileInput {
    /// The largest trace file read: 64 MiB. The largest trace the main job records is far
    /// smaller (a few hundred KiB), so this only stops what is not a trace.
    package static let maximumFileSize = 64 * 1024 * 1024
    /// The longest line read: 64 KiB, far beyond any entry (labels are short).
    package static let maximumLineLength = 64 * 1024

    /// Reads and parses the trace at `path`.
    /// - Throws: ``TraceFileInputError``, one line that names the path and what is wrong.
    package static func read(_ path: String) throws(TraceFileInputError) -> ReplayTrace {
        let bytes = try readBytes(path)
        let text = try lines(of: bytes, path: path)
        do { return try ReplayTrace(parsing: text) } catch { throw .malformed(path: path, error) }
    }

    private static func readBytes(_ path: String) throws(TraceFileInputError) -> [UInt8] {
        // O_NONBLOCK: opening a FIFO that has no writer returns at once (it is refused below).
        var fd: Int32
        repeat { fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw .cannotRead(path: path, errno: errno) }
        defer { _ = close(fd) }   // read-only: a failed close loses nothing
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .cannotRead(path: path, errno: errno) }
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG else { throw .notRegularFile(path: path, kind: kindName(kind)) }
        guard status.st_size <= maximumFileSize else { throw .tooLarge(path: path, size: Int(status.st_size)) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(status.st_size))
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(path: path, errno: errno)
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            // The file may have grown since fstat.
            if bytes.count > maximumFileSize { throw .tooLarge(path: path, size: bytes.count) }
        }
    }

    /// The text with every line checked against ``maximumLineLength``, CRLF read as LF.
    private static func lines(of bytes: [UInt8], path: String) throws(TraceFileInputError) -> String {
        var normalized: [UInt8] = []
        normalized.reserveCapacity(bytes.count)
        var line = 1
        var lineStart = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
            let end = index > lineStart && bytes[index - 1] == UInt8(ascii: "\r") ? index - 1 : index
            guard end - lineStart <= maximumLineLength else { throw .lineTooLong(path: path, line: line, length: end - lineStart) }
            normalized += bytes[lineStart..<end]
            normalized.append(UInt8(ascii: "\n"))
            lineStart = index + 1
            line += 1
        }
        guard bytes.count - lineStart <= maximumLineLength else {
            throw .lineTooLong(path: path, line: line, length: bytes.count - lineStart)
        }
        normalized += bytes[lineStart...]
        guard let text = String(validating: normalized, as: UTF8.self) else { throw .notUTF8(path: path) }
        return text
    }

    private static func kindName(_ kind: mode_t) -> String {
        switch kind {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    /// `text` when it has at most `limit` characters; else its first `limit` characters and its
    /// length, so one long line cannot flood a terminal.
    ///
    /// ```swift
    /// TraceFileInput.shortened(String(repeating: "x", count: 300), limit: 4)   // "xxxx… (300 characters)"
    /// ```
    package static func shortened(_ text: String, limit: Int = 200) -> String {
        let count = text.count
        guard count > limit else { return text }
        return String(text.prefix(limit)) + "… (\(count) characters)"
    }

    /// A divergence as one line, each trace line in it shortened (``shortened(_:limit:)``).
    package static func describe(_ divergence: ReplayDivergence, limit: Int = 200) -> String {
        "line \(divergence.line) (pass \(divergence.pass)): expected "
            + (divergence.expected.map { shortened($0, limit: limit) } ?? "the end of the trace")
            + ", got " + (divergence.actual.map { shortened($0, limit: limit) } ?? "the end of the replay")
    }
}

/// Why a trace file named on the command line was not read. Each says it in one line.
package enum TraceFileInputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `open`, `fstat` or `read` failed with this errno.
    case cannotRead(path: String, errno: Int32)
    /// The path names a FIFO, device, directory or socket (its kind), not a file.
    case notRegularFile(path: String, kind: String)
    /// The file holds more than ``TraceFileInput/maximumFileSize`` bytes.
    case tooLarge(path: String, size: Int)
    /// A line is longer than ``TraceFileInput/maximumLineLength`` bytes.
    case lineTooLong(path: String, line: Int, length: Int)
    /// The file is not UTF-8 text.
    case notUTF8(path: String)
    /// The text is not a valid trace (the parser's error names the line and field).
    case malformed(path: String, ReplayTraceError)

    package var description: String {
        switch self {
        case .cannotRead(let path, let code): "cannot read \(path): \(String(cString: strerror(code)))"
        case .notRegularFile(let path, let kind): "\(path) is \(kind), not a trace file; refused without reading"
        case .tooLarge(let path, let size):
            "\(path) holds \(size) bytes, more than a trace file may (\(TraceFileInput.maximumFileSize) bytes); refused"
        case .lineTooLong(let path, let line, let length):
            "\(path):\(line): a line of \(length) bytes, longer than a trace line may be (\(TraceFileInput.maximumLineLength) bytes); refused"
        case .notUTF8(let path): "\(path): not UTF-8 text"
        case .malformed(let path, let error): "\(path): \(TraceFileInput.shortened(error.description, limit: 300))"
        }
    }
}
