// What the pool reports, through RunLoopDiagnostics, with objc4's wording where a person or a
// tool may look for it. Fatal cases are reported with severity `.fault`, then stop the process
// in one place, `stop(_:)`, so every fatal pool error ends with the same kind of line.
//
// A bad pop prints exactly two lines before Swift's crash report (Docs/Rules.md, AP5: a token
// already popped stops the process, with objc4's text):
//   RunLoopKit [fault] pool.bad-pop (TOKEN): Invalid or prematurely-freed autorelease pool TOKEN. Set a breakpoint on objc_autoreleasePoolInvalid to debug. (REASON)
//   Autorelease/PoolDiagnostics.swift:LINE: Fatal error: Invalid autorelease pools are a fatal error
// where LINE is the line of `fatalError` in `stop(_:)`. objc4 prints `objc[PID]: ` before each
// of its two lines instead, and aborts.

import RunLoopDiagnostics

/// The pool's diagnostic ids and messages.
enum PoolDiagnostics {
    /// objc4's badPop: an unchecked pop of a token that is not a live pool of this thread.
    static func badPop(_ token: UInt, reason: AutoreleasePoolError) -> Never {
        if case let .corruptedPage(page, _, _) = reason, let corrupted = PoolPage(address: page) {
            corruptPage(corrupted)
        }
        Diagnostics.report(.fault, "pool.bad-pop",
                           "Invalid or prematurely-freed autorelease pool \(hex(token)). "
                               + "Set a breakpoint on objc_autoreleasePoolInvalid to debug. (\(reason))",
                           item: hex(token))
        objc_autoreleasePoolInvalid(token)
        stop("Invalid autorelease pools are a fatal error")
    }

    /// The one place the pool stops the process, after reporting why: Swift's fatal error, which
    /// prints `Autorelease/PoolDiagnostics.swift:LINE: Fatal error: MESSAGE` and then the
    /// runtime's crash report. (objc4 writes `objc[PID]: MESSAGE` and aborts.)
    static func stop(_ message: String) -> Never {
        fatalError(message)
    }

    /// objc4's busted(): a page of this thread's chain failed its magic (or thread) check on a
    /// pop path. Reports, then traps.
    static func corruptPage(_ page: PoolPage) -> Never {
        reportCorruptPage(page, severity: .fault)
        stop("autorelease pool page \(hex(page.address)) corrupted")
    }

    /// objc4's check(false) on the print paths: reports the corrupted page; the caller stops
    /// walking the chain there.
    static func reportCorruptPage(_ page: PoolPage, severity: Diagnostic.Severity = .error) {
        let found = page.magic
        let expected = PageLayout.magicWords
        let words = { (m: (UInt32, UInt32, UInt32, UInt32)) in
            [m.0, m.1, m.2, m.3].map { hex(UInt($0)) }.joined(separator: " ")
        }
        let message = "autorelease pool page \(hex(page.address)) corrupted: magic \(words(found)), "
            + "should be \(words(expected)); pthread \(hex(page.thread)), should be \(hex(currentThreadID()))"
        Diagnostics.report(severity, "pool.page-corrupted", message, item: hex(page.address))
    }

    /// objc4's autoreleaseNoPool under OBJC_DEBUG_MISSING_POOLS.
    static func missingPool(entry: UInt, fatal: Bool) {
        let name = typeName(of: Entry.object(entry).takeUnretainedValue())
        Diagnostics.report(fatal ? .fault : .warning, "pool.missing-pool",
                           "MISSING POOLS: (\(hex(currentThreadID()))) Object \(hex(entry)) of class \(name) "
                               + "autoreleased with no pool in place - just leaking - break on objc_autoreleaseNoPool() to debug",
                           item: name)
        objc_autoreleaseNoPool(entry)
        if fatal { stop("Missing pools are a fatal error") }
    }

    /// `deferCleanup` with no pool in place: the cleanup waits for the thread's end.
    static func cleanupWithoutPool(label: String) {
        Diagnostics.report(.warning, "pool.cleanup-without-pool",
                           "AutoreleasePool.deferCleanup(label: \"\(label)\") was called with no pool in place on thread "
                               + "\(hex(currentThreadID())); it will run when the thread exits, at exit() on the thread "
                               + "that calls it, or at AutoreleasePool.drainThread()",
                           item: label)
    }

    /// A system call failed and the pool carries on as `consequence` says.
    static func systemCallFailed(_ call: String, status: Int32, consequence: String) {
        Diagnostics.report(.error, "pool.system-call-failed", "\(call) failed with error \(status): \(consequence)",
                           item: call)
    }

    /// A system call failed and the pool cannot go on: report, then trap.
    static func fatalSystemCallFailure(_ call: String, status: Int32, consequence: String) -> Never {
        fatal("pool.system-call-failed", "\(call) failed with error \(status): \(consequence)", item: call)
    }

    /// An internal inconsistency the pool cannot recover from: report, then trap.
    static func fatal(_ id: DiagnosticID, _ message: String, item: String? = nil) -> Never {
        Diagnostics.report(.fault, id, message, item: item)
        stop("autorelease pool: \(message)")
    }

    /// The name the debug print and the missing-pool line show: a cleanup's label, or the type.
    static func typeName(of object: AnyObject) -> String {
        if let cleanup = object as? DeferredCleanup { return cleanup.label }
        return _typeName(type(of: object), qualified: false)
    }
}

/// "0x…" like %p.
func hex(_ value: UInt) -> String { "0x" + String(value, radix: 16) }

/// Breakpoint hook, as in objc4 (`break set -r objc_autoreleasePoolInvalid`).
@inline(never) @_optimize(none)
func objc_autoreleasePoolInvalid(_ token: UInt) {}

/// Breakpoint hook, as in objc4 (`break set -r objc_autoreleaseNoPool`).
@inline(never) @_optimize(none)
func objc_autoreleaseNoPool(_ object: UInt) {}
