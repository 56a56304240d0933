import CUVHost
import RunLoopCore

/// One run of a `Loop` driven by a libuv loop of its own, through the core's hosted run (H1–H4):
/// the same calls the GLib bridge makes, with libuv's handles — proof that the interface is
/// not GLib-shaped.
///
/// - a `uv_prepare_t` calls `HostedRun.prepare()` and arms a `uv_timer_t` at the loop's deadline
///   (or a `uv_idle_t`, so that libuv does not block, when the pass must not wait); when the
///   pass may wait, libuv's poll is about to block and it calls `hostWillSleep()`: BeforeWaiting
///   (the libuv loop is the run's own, so nothing else keeps it from blocking);
/// - a `uv_poll_t` watches `HostedRun.descriptor`, so the loop's work wakes libuv's poll;
/// - a `uv_check_t`, after the poll, calls `hostDidWake()` (AfterWaiting) when libuv slept, then
///   `dispatch()`; when the run ends, libuv's loop stops.
///
/// ```swift
/// let loop = Loop(clock: MonotonicClock.shared)
/// let timer = try LoopTimer(fireAt: loop.clock.now.advanced(by: .milliseconds(5)), label: "t") { _ in print("fired") }
/// loop.add(timer, mode: .default)
/// print(try LoopOnLibuv.run(loop, timeout: .milliseconds(20)).result)   // fired, then timedOut
/// ```
public final class LoopOnLibuv {
    /// Why libuv could not host the run.
    public enum Failure: Error, Equatable {
        /// libuv's own error code (`uv_loop_init`, `uv_poll_init`, `uv_poll_start`).
        case libuv(Int32)
        /// A virtual clock: libuv's timers are real time.
        case virtualClock
    }

    /// What one hosted run did.
    public struct Outcome: Equatable {
        /// The run's result, as `Loop.run` returns it.
        public var result: Loop.RunResult
        /// libuv iterations the run took, and those in which libuv blocked.
        public var iterations: Int
        public var sleeps: Int
    }

    private let run: HostedRun
    private let clock: any LoopClock

    private init(run: HostedRun, clock: any LoopClock) {
        self.run = run
        self.clock = clock
    }

    /// Runs `loop` once in `mode` in a libuv loop of its own, as `loop.run(mode:timeout:…)` does
    /// with its own waits. On the loop's thread.
    public static func run(_ loop: Loop, mode: Loop.Mode = .default, timeout: Duration? = nil,
                           returnAfterSourceHandled: Bool = false) throws(Failure) -> Outcome {
        guard !loop.clock.isVirtual else { throw Failure.virtualClock }
        let run = loop.beginHostedRun(mode: mode, timeout: timeout, returnAfterSourceHandled: returnAfterSourceHandled)
        if let result = run.result { return Outcome(result: result, iterations: 0, sleeps: 0) }
        let driver = LoopOnLibuv(run: run, clock: loop.clock)
        var code: Int32 = 0
        let owner = Unmanaged.passUnretained(driver).toOpaque()
        guard let host = uvhost_create(run.descriptor, callbacks(owner), &code) else {
            run.end()
            throw Failure.libuv(code)
        }
        _ = uvhost_run(host)
        let outcome = Outcome(result: run.result ?? run.end(), iterations: uvhost_iterations(host), sleeps: uvhost_sleeps(host))
        uvhost_destroy(host)
        withExtendedLifetime(driver) {}
        return outcome
    }

    private static func callbacks(_ owner: UnsafeMutableRawPointer) -> uvhost_callbacks {
        uvhost_callbacks(
            owner: owner,
            prepare: { owner in LoopOnLibuv.driver(owner).prepare() },
            will_sleep: { owner in LoopOnLibuv.driver(owner).run.hostWillSleep() },
            did_wake: { owner in LoopOnLibuv.driver(owner).run.hostDidWake() },
            dispatch: { owner in LoopOnLibuv.driver(owner).run.dispatch() == nil ? 0 : 1 })
    }

    private static func driver(_ owner: UnsafeMutableRawPointer?) -> LoopOnLibuv {
        Unmanaged<LoopOnLibuv>.fromOpaque(owner!).takeUnretainedValue()
    }

    /// The run's wait in libuv's terms: milliseconds, rounded up so the loop's timer is due at
    /// the wake.
    private func prepare() -> Int64 {
        switch run.prepare() {
        case .no: return Int64(UVHOST_NO_WAIT)
        case .indefinitely: return Int64(UVHOST_INDEFINITELY)
        case .until(let instant):
            let now = clock.now
            guard now < instant else { return Int64(UVHOST_DUE_NOW) }
            return Int64((instant.nanoseconds - now.nanoseconds + 999_999) / 1_000_000)
        }
    }
}
