import RunLoopCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Process-wide memory figures read without Foundation.
///
/// ```swift
/// print(ProcessMemory.residentBytes(), ProcessMemory.heapInUseBytes())
/// ```
public enum ProcessMemory {
    /// Resident set size: the second field of /proc/self/statm times the page size;
    /// 0 when the file cannot be read.
    public static func residentBytes() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        // statm is a single short line: "size resident shared text lib data dt".
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
                      UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let pages: Int? = withUnsafeMutableBytes(of: &buffer) { raw -> Int? in
            let n = read(fd, raw.baseAddress, raw.count)
            guard n > 0 else { return nil }
            return secondField(UnsafeRawBufferPointer(rebasing: raw[..<n]))
        }
        guard let pages else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Parses the second space-separated decimal field.
    static func secondField(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var field = 0
        var value = 0
        var inDigits = false
        for byte in bytes {
            if byte >= 0x30 && byte <= 0x39 {
                if !inDigits { inDigits = true; value = 0 }
                value = value * 10 + Int(byte - 0x30)
            } else if inDigits {
                inDigits = false
                field += 1
                if field == 2 { return value }
            }
        }
        return inDigits && field == 1 ? value : nil
    }

    /// Heap bytes in use according to glibc's `mallinfo2()`; 0 when unavailable.
    public static func heapInUseBytes() -> Int {
        ProcessProbes.heapInUseBytes()
    }
}
