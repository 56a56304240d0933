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
    /// This failure as a ``Diagnostic``: "`what`: `call` failed: errno …".
    func diagnostic(_ id: DiagnosticID, _ what: String, item: String?, severity: Diagnostic.Severity = .error) -> Diagnostic {
        Diagnostic(severity: severity, id: id, message: "\(what): \(self)", item: item)
    }
}

extension Result where Failure == SystemCallError {
    /// The failure as a ``Diagnostic`` at `severity` about `item`; nil on success. For calls
    /// whose failure leaves nothing to undo.
    @discardableResult
    package func reportingFailure(_ id: DiagnosticID, _ what: @autoclosure () -> String, item: String? = nil,
                          severity: Diagnostic.Severity = .error) -> Success? {
        switch self {
        case .success(let value):
            return value
        case .failure(let failure):
            Diagnostics.report(failure.diagnostic(id, what(), item: item, severity: severity))
            return nil
        }
    }

    /// `reportingFailure` under the loop's lock: the diagnostic is deferred to the lock's
    /// release (see `DeferredDiagnostics`).
    @discardableResult
    func deferringFailure(_ id: DiagnosticID, _ what: @autoclosure () -> String, item: String? = nil,
                          severity: Diagnostic.Severity = .error, _ held: borrowing LoopLock.Held) -> Success? {
        switch self {
        case .success(let value):
            return value
        case .failure(let failure):
            held.deferReport(failure.diagnostic(id, what(), item: item, severity: severity))
            return nil
        }
    }
}

/// Reads (and so resets) an eventfd or timerfd counter; 0 when it was not readable. A failure
/// (only a closed descriptor can fail) is reported and reads as 0.
@inline(__always)
func drainCounter(_ fd: Int32, _ what: @autoclosure () -> String) -> UInt64 {
    var value: UInt64 = 0
    valueOrErrno("read(eventfd)") { rlk_eventfd_read(fd, &value) }
        .reportingFailure(.systemCallFailed, "draining \(what())")
    return value
}

/// `drainCounter` under the loop's lock: a failure is deferred to the lock's release.
func drainCounter(_ descriptor: Descriptor, _ what: @autoclosure () -> String, _ held: borrowing LoopLock.Held) -> UInt64 {
    readCounter(descriptor.raw).deferringFailure(.systemCallFailed, "draining \(what())", held) ?? 0
}

/// `drainCounter` that reports nothing: the caller reports the failure, or defers it, once it
/// knows it holds no lock (a port's drain reports it after releasing the port's lock).
func readCounter(_ fd: Int32) -> Result<UInt64, SystemCallError> {
    var value: UInt64 = 0
    return valueOrErrno("read(eventfd)") { rlk_eventfd_read(fd, &value) }.map { _ in value }
}

/// Creates a descriptor (an eventfd, an epoll set, a timerfd) or adds one to an epoll set while
/// building a loop, a mode or a port. Failing means the process is out of descriptors or memory
/// (EMFILE, ENFILE, ENOMEM): reported, and returned so the caller throws or refuses what needed
/// the descriptor instead of stopping the process.
func createDescriptor(_ call: StaticString, for what: @autoclosure () -> String, item: String? = nil,
                      _ body: () -> Int32) -> Result<Int32, SystemCallError> {
    let result = valueOrErrno(call, body)
    if case .failure(let failure) = result { Diagnostics.report(failure.diagnostic(.systemCallFailed, "cannot create \(what())", item: item)) }
    return result
}

/// `createDescriptor` under the loop's lock (a mode made in an add): a failure is deferred to
/// the lock's release.
func createDescriptor(_ call: StaticString, for what: @autoclosure () -> String, _ held: borrowing LoopLock.Held,
                      _ body: () -> Int32) -> Result<Int32, SystemCallError> {
    let result = valueOrErrno(call, body)
    if case .failure(let failure) = result { held.deferReport(failure.diagnostic(.systemCallFailed, "cannot create \(what())", item: nil)) }
    return result
}

/// `createDescriptor` for a descriptor the loop keeps, as a `Descriptor`.
func makeDescriptor(_ call: StaticString, for what: @autoclosure () -> String, item: String? = nil,
                    _ body: () -> Int32) -> Result<Descriptor, SystemCallError> {
    // A successful call returns a descriptor (≥ 0); a failed one is reported and returned.
    createDescriptor(call, for: what(), item: item, body).map { Descriptor($0)! }
}

/// `makeDescriptor` under the loop's lock: a failure is deferred to the lock's release.
func makeDescriptor(_ call: StaticString, for what: @autoclosure () -> String, _ held: borrowing LoopLock.Held,
                    _ body: () -> Int32) -> Result<Descriptor, SystemCallError> {
    createDescriptor(call, for: what(), held, body).map { Descriptor($0)! }
}

/// `closeDescriptor` for a `Descriptor`.
func closeDescriptor(_ descriptor: Descriptor, _ what: @autoclosure () -> String, item: String? = nil) {
    closeDescriptor(descriptor.raw, what(), item: item)
}

/// `closeDescriptor` under the loop's lock (a teardown, a mode whose creation failed): a
/// failure is deferred to the lock's release.
func closeDescriptor(_ descriptor: Descriptor, _ what: @autoclosure () -> String, _ held: borrowing LoopLock.Held) {
    if let failure = closing(descriptor.raw, what(), item: nil) { held.deferReport(failure) }
}

/// `drainCounter` for a `Descriptor`.
@inline(__always)
func drainCounter(_ descriptor: Descriptor, _ what: @autoclosure () -> String) -> UInt64 {
    drainCounter(descriptor.raw, what())
}

/// Closes a descriptor the loop owns. Never retried: on Linux the descriptor is released even
/// when `close` reports EINTR, and a retry could close a number another thread just reused.
package func closeDescriptor(_ fd: Int32, _ what: @autoclosure () -> String, item: String? = nil) {
    if let failure = closing(fd, what(), item: item) { Diagnostics.report(failure) }
}

/// Closes `fd`; the failure as a diagnostic, nil when it closed (or reported EINTR, after
/// which Linux has released it too).
func closing(_ fd: Int32, _ what: @autoclosure () -> String, item: String?) -> Diagnostic? {
    guard rlk_close(fd) != 0 else { return nil }
    let code = errno
    guard code != EINTR else { return nil }
    return SystemCallError(call: "close", code: code).diagnostic(.systemCallFailed, "closing \(what())", item: item)
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
