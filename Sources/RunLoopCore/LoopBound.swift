#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value that lives on one loop's thread, in the manner of SwiftNIO's `NIOLoopBound`.
///
/// The wrapper is `Sendable`, so it can travel through `@Sendable` closures (a block performed
/// on the loop, a timer callout), but the value inside can only be read or changed on the
/// loop's own thread: anywhere else is a precondition failure that names both threads.
///
/// It holds its loop strongly: keep one out of objects the loop itself retains (an observer's
/// closure, a callout interceptor), or the loop is never released.
///
/// ```swift
/// let loop = Loop(clock: VirtualClock())
/// let count = LoopBound(0, loop: loop)     // created on the loop's thread
/// loop.perform { count.value += 1 }        // runs there: allowed
/// loop.run(mode: .default, timeout: 0)
/// assert(count.value == 1)
/// ```
public struct LoopBound<Value>: @unchecked Sendable {
    // Sendable: `box.value` is only touched on `loop`'s thread, which every access checks.
    private final class Box {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// The loop whose thread owns the value.
    public let loop: Loop
    private let box: Box

    /// Binds `value` to `loop`. Call on the loop's thread.
    public init(_ value: Value, loop: Loop) {
        loop.preconditionOnOwnerThread("LoopBound.init")
        self.loop = loop
        self.box = Box(value)
    }

    /// The value; on the loop's thread only.
    public var value: Value {
        get {
            loop.preconditionOnOwnerThread("LoopBound.value")
            return box.value
        }
        nonmutating _modify {
            loop.preconditionOnOwnerThread("LoopBound.value")
            yield &box.value
        }
    }
}

extension Loop {
    /// True on the thread the loop belongs to (the only thread that may run it).
    public var isOwnerThread: Bool { pthread_equal(pthread_self(), owner) != 0 }

    /// Stops the process with a message naming both threads when called off the owner thread.
    func preconditionOnOwnerThread(_ function: String) {
        guard !isOwnerThread else { return }
        checkOwnerThread(function)
    }

    /// In debug builds, the same check for the loop's internal owner-only state; nothing in
    /// release builds (the run functions already checked the thread on entry).
    @inline(__always)
    func assertOwnerThread(_ function: @autoclosure () -> String) {
        #if DEBUG
        preconditionOnOwnerThread(function())
        #endif
    }
}
