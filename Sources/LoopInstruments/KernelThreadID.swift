#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The calling thread's kernel id (what `gettid()` returns), read from the `/proc/thread-self`
/// link ("<pid>/task/<tid>"): Glibc's module does not expose `gettid`, and the instruments keep
/// away from the run loop's C shims. -1 when the link cannot be read (no /proc).
func currentKernelThreadID() -> Int64 {
    var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
    return withUnsafeMutableBytes(of: &buffer) { raw -> Int64 in
        let count = readlink("/proc/thread-self", raw.baseAddress!.assumingMemoryBound(to: CChar.self), raw.count)
        guard count > 0 else { return -1 }
        // The id is the last path component, all digits.
        var value: Int64 = 0
        var sawDigit = false
        for byte in raw[..<count] {
            if byte == UInt8(ascii: "/") {
                value = 0
                sawDigit = false
            } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                sawDigit = true
            } else {
                value = 0
                sawDigit = false     // "task": the component is not the id, keep reading
            }
        }
        return sawDigit ? value : -1
    }
}
