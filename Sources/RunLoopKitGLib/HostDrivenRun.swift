import RunLoopCore

/// The calls the GLib bridge makes on a hosted run: those of the core's ``HostedRun`` (rules
/// H1–H4), as a protocol so that the plumbing tests can put a recording stand-in in its place.
///
/// In a host's iteration: ``prepare()`` before the host computes its timeout;
/// ``hostWillSleep()`` and ``hostDidWake()`` around a poll that may block; ``dispatch()`` after
/// the poll; ``end()`` when the host stops driving the run.
protocol HostDrivenRun: AnyObject {
    /// Readable whenever the loop has something to handle; -1 once the run ended.
    var descriptor: Int32 { get }
    /// The run's result once it ended, else nil.
    var result: Loop.RunResult? { get }
    /// The top of the next pass; how long the host may sleep for the loop.
    func prepare() -> HostWait
    /// The host is about to block in its poll (BeforeWaiting).
    func hostWillSleep()
    /// The host's poll returned (AfterWaiting).
    func hostDidWake()
    /// The rest of the pass; the run's result when it ended, else nil.
    @discardableResult
    func dispatch() -> Loop.RunResult?
    /// Ends the run (Exit); the result, the earlier one if it had ended already.
    @discardableResult
    func end() -> Loop.RunResult
}

extension HostedRun: HostDrivenRun {}
