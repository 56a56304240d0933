import Testing
@testable import RunLoopCore
#if canImport(Glibc)
import Glibc
#endif

// What the suites that inject faults at the system-call shims share.

/// One planned failure of a system call (`InjectedFaults.with(Fault(.read, EBADF)) { … }`).
typealias Fault = InjectedFaults.Fault

extension Trait where Self == ConditionTrait {
    /// The fault points exist only in debug builds (`RLK_FAULT_INJECTION`); a release build's
    /// test run skips the suites that need them.
    static var needsInjectedFaults: Self {
        .enabled(if: InjectedFaults.isAvailable, "needs a debug build (RLK_FAULT_INJECTION)")
    }
}

/// A pipe for fd-source tests.
struct FaultTestPipe {
    let read: Int32
    let write: Int32

    init() throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SystemCallError(call: "pipe", code: errno) }
        read = fds[0]
        write = fds[1]
    }

    func writeByte() {
        var byte: UInt8 = 1
        _ = Glibc.write(write, &byte, 1)
    }

    func close() {
        _ = Glibc.close(read)
        _ = Glibc.close(write)
    }
}
