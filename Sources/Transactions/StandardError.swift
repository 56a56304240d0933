#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a line to standard error without touching the C `stderr` global (not concurrency-safe
/// to reference in Swift 6 mode).
func writeToStandardError(_ line: String) {
    var text = line
    if !text.hasSuffix("\n") { text += "\n" }
    text.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
