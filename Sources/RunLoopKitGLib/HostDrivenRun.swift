import RunLoopCore

/// One run of a loop whose waits are a host's, as the GLib bridge uses it: the core's hosted
/// run behind a thin adapter, so that a change of the core's names is a change of this file.
///
/// The calls, in a host's iteration: ``prepare()`` before the host computes its timeout;
/// ``hostWillSleep()`` and ``hostDidWake()`` around a poll that may block; ``dispatch()`` when
/// the host found ``descriptor`` readable or the deadline reached; ``end()`` once.
protocol HostDrivenRun: AnyObject {
    /// Readable whenever the loop has something to handle.
    var descriptor: Int32 { get }
    /// Starts the next pass up to its wait; returns how long the host may sleep for the loop
    /// (`.zero`: not at all; nil: no limit).
    func prepare() -> Duration?
    /// The host is about to block in its poll (BeforeWaiting).
    func hostWillSleep()
    /// The host's poll returned (AfterWaiting).
    func hostDidWake()
    /// Handles what is ready without blocking; the run's result when it ended, else nil.
    func dispatch() -> Loop.RunResult?
    /// Ends the run (Exit observers); idempotent.
    func end()
}
