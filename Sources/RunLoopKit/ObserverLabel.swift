/// The callout names the standard observers carry (those of a published `CFRunLoopGetMain()`
/// dump), so traces, dumps and the testing toolkit can recognise them.
///
/// ```swift
/// let ours = loop.observers(in: .default).filter { !ObserverLabel.standard.contains($0.label) }
/// ```
public enum ObserverLabel {
    /// The pool observers on Entry (push) and on BeforeWaiting | Exit (pop + push, pop).
    public static let autoreleasePool = "_wrapRunLoopWithAutoreleasePoolHandler"
    /// The event hook at order 0 on BeforeWaiting.
    public static let eventHook = "_UIGestureRecognizerUpdateObserver"
    /// The hook point at order 1999000.
    public static let beforeCommit = "_beforeCACommitHandler"
    /// The commit observer at order 2000000.
    public static let commit = "CA::Transaction::observer_callback"
    /// The hook point at order 2001000.
    public static let afterCommit = "_afterCACommitHandler"
    /// The Entry observer that raises the commit pipeline's run level.
    public static let transactionRunLevel = "transactionRunLevel"

    /// Every label above.
    public static let standard: Set<String> = [
        autoreleasePool, eventHook, beforeCommit, commit, afterCommit, transactionRunLevel,
    ]
}
