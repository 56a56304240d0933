#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes whole lines to file descriptor 2 with `write(2)`, without the C `stderr` global (not
/// concurrency-safe to touch in Swift 6). One call per line, so lines of different threads do not
/// interleave; a short write continues and EINTR is retried.
public enum StandardErrorLine {
    /// Writes `line`, adding a newline if it has none. A failing descriptor 2 loses the line:
    /// there is nowhere left to report that.
    public static func write(_ line: String) {
        var text = line
        if !text.hasSuffix("\n") { text += "\n" }
        text.withUTF8 { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                #if canImport(Darwin)
                let written = Darwin.write(2, base + offset, buffer.count - offset)
                #elseif canImport(Musl)
                let written = Musl.write(2, base + offset, buffer.count - offset)
                #else
                let written = Glibc.write(2, base + offset, buffer.count - offset)
                #endif
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
