// objc4's messages, word for word where a tool or a test may look for them.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

enum Diagnostics {
    /// objc4 prints the bad-pop line once per process.
    static let complainedAboutBadPop = Atomic<Bool>(false)

    /// One line to standard error with objc4's `objc[pid]: ` prefix, written in one call so
    /// lines from different threads do not interleave.
    static func inform(_ line: String) {
        var text = "objc[\(getpid())]: \(line)\n"
        text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    }

    /// objc4's badPop: report (first time only), then the fatal error.
    static func badPop(_ token: UInt, reason: AutoreleasePoolError) -> Never {
        if !complainedAboutBadPop.exchange(true, ordering: .relaxed) {
            inform("Invalid or prematurely-freed autorelease pool \(hex(token)). Set a breakpoint on objc_autoreleasePoolInvalid to debug. ")
        }
        objc_autoreleasePoolInvalid(token)
        inform("(\(reason))")
        fatalError("Invalid autorelease pools are a fatal error")
    }

    static func missingPool(entry: UInt, fatal: Bool) {
        let object = Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: entry).unsafelyUnwrapped).takeUnretainedValue()
        inform("MISSING POOLS: (\(hex(currentThreadID()))) Object \(hex(entry)) of class \(typeName(of: object)) "
            + "autoreleased with no pool in place - just leaking - break on objc_autoreleaseNoPool() to debug")
        objc_autoreleaseNoPool(entry)
        if fatal { fatalError("Missing pools are a fatal error") }
    }

    static func typeName(of object: AnyObject) -> String {
        if let cleanup = object as? DeferredCleanup { return cleanup.label }
        return _typeName(type(of: object), qualified: false)
    }
}

/// Breakpoint hook, as in objc4 (`break set -r objc_autoreleasePoolInvalid`).
@inline(never) @_optimize(none)
func objc_autoreleasePoolInvalid(_ token: UInt) {}

/// Breakpoint hook, as in objc4 (`break set -r objc_autoreleaseNoPool`).
@inline(never) @_optimize(none)
func objc_autoreleaseNoPool(_ object: UInt) {}
