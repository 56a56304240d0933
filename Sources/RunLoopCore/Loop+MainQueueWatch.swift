import RunLoopDiagnostics
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CRunLoopShims

// Loop.main's check of the main dispatch queue without a system call (issue 12: a polling pass
// on Loop.main makes at most the main-queue check, and no call when the queue is idle).
//
// libdispatch signals the main queue by writing an eventfd (X1). Polling that descriptor costs
// one epoll_wait per pass, more than a whole pass of libuv on this hardware. Instead an io_uring
// multishot poll on it posts a completion into memory shared with the kernel each time
// libdispatch writes; a pass reads that ring (two loads) and polls the descriptor only when a
// poke arrived since a wait last found the descriptor unreadable or drained it
// (`mainQueueMayBeReady`). A poke that races with that wait arrives as a completion after it,
// so the next pass sees it: no poke is lost, and none is seen before it happened.
extension Loop {
    /// Main loop, owner thread, once `owned.dispatchFD` is known (in a run's first section):
    /// starts the watch, or reports once, when the lock is released, that the kernel has none
    /// (the passes then poll the descriptor, as before).
    func watchMainQueue(_ held: borrowing LoopLock.Held) {
        guard let descriptor = owned.dispatchFD else { return }
        if let watch = rlk_readiness_ring_create(descriptor.raw) {
            owned.mainQueueWatch = watch
            return
        }
        let failure = SystemCallError(call: "io_uring_setup", code: errno)
        held.deferReport(.info, .mainQueuePolled,
                         "\(failure): Loop.main checks the main dispatch queue with a system call on each polling pass")
    }

    /// Main loop, owner thread: true when no poke of the main queue can be unread. Consumes
    /// the watch's completions. Without a watch, false: the wait must poll the descriptor.
    /// Under the loop's lock (`isQuiet`): a failure is deferred to its release, and makes the
    /// answer false, so the pass goes on to a wait that polls the set (`waitInKernel`, which
    /// releases the lock with `unlockReporting()`).
    func mainQueueIdle(_ held: borrowing LoopLock.Held) -> Bool {
        guard let watch = owned.mainQueueWatch else { return false }
        switch rlk_readiness_ring_check(watch) {
        case 0:
            return !owned.mainQueueMayBeReady
        case 1:
            owned.mainQueueMayBeReady = true
            return false
        default:
            // Re-arming the kernel's poll failed: fall back to polling the descriptor.
            let failure = SystemCallError(call: "io_uring_enter", code: errno)
            held.deferReport(.warning, .systemCallFailed,
                             "re-arming the main queue's watch: \(failure); Loop.main polls the main queue with a system call from now on")
            rlk_readiness_ring_destroy(watch)
            owned.mainQueueWatch = nil
            owned.mainQueueMayBeReady = true
            return false
        }
    }

    /// Whether `Loop.main`'s polling passes read the main queue's state from the kernel's
    /// completion ring (no system call) rather than polling its descriptor. For tests and
    /// benchmarks; false on every other loop.
    package var watchesMainQueueWithoutSystemCalls: Bool {
        checkOwnerThread("Loop.watchesMainQueueWithoutSystemCalls")
        return owned.mainQueueWatch != nil
    }
}
