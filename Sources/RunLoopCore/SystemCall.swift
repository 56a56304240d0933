import RunLoopDiagnostics
import CRunLoopShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A system call that failed: which call, and the `errno` it left.
///
/// ```swift
/// let failure = SystemCallError(call: "epoll_ctl(ADD)", code: 17)
/// print(failure)   // "epoll_ctl(ADD) failed: errno 17 (File exists)"
/// ```
public struct SystemCallError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The call, as a person would search for it ("epoll_ctl(ADD)", "eventfd", "read").
    public let call: String
    /// The `errno` value.
    public let code: Int32

    /// A failure of `call` with `errno` `code`.
    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    public var description: String {
        let text = strerror(code).map { String(cString: $0) } ?? "unknown error"
        return "\(call) failed: errno \(code) (\(text))"
    }
}

/// Runs a system call (or a C shim returning -1 and setting `errno` on failure), retrying on
/// EINTR, and returns its value or the failure — in the manner of swift-system's `valueOrErrno`.
///
/// Package-visible so the other modules of this package check their calls the same way.
///
/// ```swift
/// let fd = try valueOrErrno("eventfd") { rlk_eventfd_create() }.get()
/// ```
@inline(__always)
package func valueOrErrno<Value: FixedWidthInteger>(_ call: StaticString, _ body: () -> Value) -> Result<Value, SystemCallError> {
    while true {
        let value = body()
        if value != -1 { return .success(value) }
        let code = errno
        if code == EINTR { continue }
        return .failure(SystemCallError(call: "\(call)", code: code))
    }
}

extension SystemCallError {
    /// This failure as a ``Diagnostic``: "`what`: `call` failed: errno …". Out of line: only
    /// failure paths build one.
    @inline(never)
    func diagnostic(_ id: DiagnosticID, _ what: String, item: String?, severity: Diagnostic.Severity = .error) -> Diagnostic {
        Diagnostic(severity: severity, id: id, message: "\(what): \(self)", item: item)
    }

    /// The diagnostic of a descriptor that could not be created, or added to the wait set it
    /// was made for: "cannot create `what`: …".
    func creationDiagnostic(_ what: String, item: String? = nil) -> Diagnostic {
        diagnostic(.systemCallFailed, "cannot create \(what)", item: item)
    }
}

/// A value, and the failure that came with it as a diagnostic not yet reported (nil: none).
/// Each helper below does its work once and returns one of these; its caller decides where the
/// failure goes: `reported()` when it holds no RunLoopKit lock, `deferred(_:)` under a loop's
/// lock (kept until the lock's release, see `DeferredDiagnostics`). Its result is not
/// discardable, so a failure cannot be dropped by forgetting to route it.
struct Unreported<Value> {
    let value: Value
    let failure: Diagnostic?

    @inline(__always)
    init(_ value: Value, failure: Diagnostic? = nil) {
        self.value = value
        self.failure = failure
    }

    /// The value; the failure, if any, reported now.
    @inline(__always) @discardableResult
    func reported() -> Value {
        if let failure { Diagnostics.report(failure) }
        return value
    }

    /// The value; the failure, if any, deferred to the release of the loop's lock.
    @inline(__always) @discardableResult
    func deferred(_ held: borrowing LoopLock.Held) -> Value {
        if let failure { held.deferReport(failure) }
        return value
    }
}

extension Result where Failure == SystemCallError {
    /// The value, or nil and the failure as a ``Diagnostic`` at `severity` about `item`, not
    /// yet reported. For calls whose failure leaves nothing to undo.
    @inline(__always)
    func unreported(_ id: DiagnosticID, _ what: @autoclosure () -> String, item: String? = nil,
                    severity: Diagnostic.Severity = .error) -> Unreported<Success?> {
        switch self {
        case .success(let value): return Unreported(value)
        case .failure(let failure): return Unreported(nil, failure: failure.diagnostic(id, what(), item: item, severity: severity))
        }
    }

    /// `unreported(…).reported()`: the value, or nil with the failure reported.
    @discardableResult
    package func reportingFailure(_ id: DiagnosticID, _ what: @autoclosure () -> String, item: String? = nil,
                                  severity: Diagnostic.Severity = .error) -> Success? {
        unreported(id, what(), item: item, severity: severity).reported()
    }

    /// `unreported(…).deferred(held)`: the value, or nil with the failure deferred to the
    /// release of the loop's lock.
    @discardableResult
    func deferringFailure(_ id: DiagnosticID, _ what: @autoclosure () -> String, item: String? = nil,
                          severity: Diagnostic.Severity = .error, _ held: borrowing LoopLock.Held) -> Success? {
        unreported(id, what(), item: item, severity: severity).deferred(held)
    }
}

/// Reads (and so resets) an eventfd or timerfd counter: its value, 0 when it was not readable.
/// A failure (only a closed descriptor can fail) reads as 0.
@inline(__always)
func drainCounter(_ fd: Int32, _ what: @autoclosure () -> String) -> Unreported<UInt64> {
    var value: UInt64 = 0
    switch valueOrErrno("read(eventfd)", { rlk_eventfd_read(fd, &value) }) {
    case .success: return Unreported(value)
    case .failure(let failure): return Unreported(0, failure: failure.diagnostic(.systemCallFailed, "draining \(what())", item: nil))
    }
}

/// Creates a descriptor (an eventfd, an epoll set, a timerfd) while building a loop, a mode or
/// a port. Failing means the process is out of descriptors or memory (EMFILE, ENFILE, ENOMEM):
/// the failure is returned, so the caller throws or refuses what needed the descriptor instead
/// of stopping the process, with its diagnostic ("cannot create `what`").
func makeDescriptor(_ call: StaticString, for what: @autoclosure () -> String, item: String? = nil,
                    _ body: () -> Int32) -> Unreported<Result<Descriptor, SystemCallError>> {
    switch valueOrErrno(call, body) {
    // A successful call returns a descriptor (≥ 0).
    case .success(let fd): return Unreported(.success(Descriptor(fd)!))
    case .failure(let failure): return Unreported(.failure(failure), failure: failure.creationDiagnostic(what(), item: item))
    }
}

/// Closes a descriptor the loop owns. Never retried: on Linux the descriptor is released even
/// when `close` reports EINTR, and a retry could close a number another thread just reused.
/// The failure comes back unreported (EINTR is none: Linux has released the descriptor too).
func closing(_ fd: Int32, _ what: @autoclosure () -> String, item: String? = nil) -> Unreported<Void> {
    guard rlk_close(fd) != 0 else { return Unreported(()) }
    let code = errno
    guard code != EINTR else { return Unreported(()) }
    return Unreported((), failure: SystemCallError(call: "close", code: code).diagnostic(.systemCallFailed, "closing \(what())", item: item))
}

/// `closing(…).reported()`, for the other modules of the package, which close descriptors of
/// their own with no RunLoopKit lock held.
package func closeDescriptor(_ fd: Int32, _ what: @autoclosure () -> String, item: String? = nil) {
    closing(fd, what(), item: item).reported()
}

/// Test-only fault injection: makes chosen system calls of RunLoopCore fail on the calling
/// thread, at the C shim, before the kernel is asked, so each failure travels the path a real
/// one takes (EINTR retries, EAGAIN meaning "not readable", the diagnostics). Debug builds only:
/// release builds compile the shims without any check (`RLK_FAULT_INJECTION` is not defined).
package enum InjectedFaults {
    /// The system calls that can be made to fail.
    package enum Call: Int32, CaseIterable, Sendable {
        case epollCreate = 0, epollAdd, epollModify, epollRemove, epollWait
        case eventfd, timerfdCreate, timerfdSettime, read, write, ringSetup, close
    }

    /// One plan: the next `times` calls of `call`, after `skip` that go through, fail with `code`.
    package struct Fault: Sendable {
        package var call: Call
        package var code: Int32
        package var skip: Int
        package var times: Int
        package init(_ call: Call, _ code: Int32, after skip: Int = 0, times: Int = 1) {
            self.call = call
            self.code = code
            self.skip = skip
            self.times = times
        }
    }

    /// Whether this build can inject faults (debug builds). Clears the calling thread's plans.
    package static var isAvailable: Bool {
        defer { rlk_fault_clear() }
        return rlk_fault_inject(Call.read.rawValue, 0, 0, 0) == 0
    }

    /// Runs `body` with `faults` planned on the calling thread; clears every plan and count of
    /// the thread afterwards. At most 8 plans.
    package static func with<Value>(_ faults: Fault..., body: () throws -> Value) rethrows -> Value {
        precondition(isAvailable, "fault injection needs a debug build of CRunLoopShims")
        for fault in faults {
            precondition(rlk_fault_inject(fault.call.rawValue, fault.code, UInt32(fault.skip), UInt32(fault.times)) == 0,
                         "at most 8 fault plans per thread")
        }
        defer { rlk_fault_clear() }
        return try body()
    }

    /// Faults injected into `call` on the calling thread so far (inside ``with(_:body:)``).
    package static func injected(_ call: Call) -> Int { Int(rlk_fault_injected(call.rawValue)) }
}
