// Swift 6.3 is the first toolchain with `SchedulingExecutor`; an older one (the package builds
// with 6.1) builds RunLoopTesting without this file, and a real-clock sleep in a test is then
// seen only when its wake-up comes back from another thread.
#if compiler(>=6.3)
@_spi(ExperimentalScheduling) import _Concurrency
import RunLoopKit

// How a virtual-loop test sees a sleep on a real clock the moment it begins.
//
// Swift 6.3's `Task.sleep` (`ContinuousClock`, `SuspendingClock`, `Task.sleep(nanoseconds:)`)
// hands the sleep's wake-up job to the current *scheduling* executor, on the sleeping task's
// thread: the task's preferred task executor if it is one, else the thread's current task
// executor, else the default executor (Dispatch's global one, which is). Only when none is
// does the runtime call `swift_task_enqueueGlobalWithDeadline` and its hook, so that hook is
// never reached here. On a test's thread every task reaches the sleep with the loop as its
// preferred task executor (the body, its child tasks) or as the thread's current one (any
// other task: the stdlib's sleep is nonisolated, so the task hops to the global executor on
// the way, which the runtime hook on the global executor queues on the loop). A loop that is a
// scheduling executor is therefore asked, for each such sleep, where to put its wake-up.
//
// The conformance is declared here, not in RunLoopCore: only a process that links
// RunLoopTesting has it, and there a loop that is not a test's, or a sleep off the test's
// thread, gets its wake-up handed to the global executor's own scheduling, which is what the
// runtime does without the conformance. `SchedulingExecutor` is Swift 6.3's experimental SPI
// (SE-0505, not yet accepted): a toolchain that renames it fails to build here, and
// `aSleepOnARealClockIsReportedAndEndsAtOnce` fails on one that stops consulting it.
//
// Why the wake-up is queued at once instead of cancelling the task: the wake-up is a job that
// resumes the sleep normally whenever it runs, without looking at the clock. (Checked with Swift
// 6.3.1: a scheduling executor that ran it at once ended one-hour sleeps on ContinuousClock and
// SuspendingClock, `Task.sleep(nanoseconds:)` and the deprecated `Task.sleep(_:)` normally, in
// under a millisecond, each asking the executor once: no second wake-up at the deadline.)
// Cancelling the task would stick to it: every later `Task.sleep` of that task throws at once
// without reaching any executor, so a loop that polls with `try? await Task.sleep` would never
// suspend, and nothing else on the loop would run.
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
@_spi(ExperimentalScheduling)
extension Loop: SchedulingExecutor {
    /// Queues `job`, the wake-up of a sleep on `clock`, for `instant`. On a virtual-loop test's
    /// thread the sleep is reported and its wake-up queued on the loop at once, behind the jobs
    /// already there: the sleep ends as if its time had passed, and the sleeping task goes on
    /// after them. A wake-up already due (a deadline that has passed) is queued the same way,
    /// with nothing reported: it waits for nothing. Anywhere else it goes to the global
    /// executor's own scheduling.
    public func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?,
                                  clock: C) {
        if let monitor = VirtualLoopMonitor.current, monitor.loop === self {
            let remaining = clock.now.duration(to: instant)
            if remaining > .zero {
                monitor.noteRealClockSleep(clock: "\(C.self)", remaining: remaining as? Duration)
            }
            enqueueTaskJob(job)
            return
        }
        guard let global = globalConcurrentExecutor as? any SchedulingExecutor else {
            preconditionFailure("RunLoopTesting: the global concurrent executor cannot schedule a job at a deadline")
        }
        global.enqueue(job, at: instant, tolerance: tolerance, clock: clock)
    }
}
#endif
