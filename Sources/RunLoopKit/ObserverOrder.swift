/// The observer orders an iOS main run loop uses (published `CFRunLoopGetMain()` dumps), which
/// RunLoopKit's standard observers reuse so that user observers can be placed between them.
///
/// ```swift
/// let early = LoopObserver(activities: .beforeWaiting, order: ObserverOrder.commit - 1) { _, _ in
///     // runs just before the commit, after UIKit's before-commit hook
/// }
/// ```
public enum ObserverOrder {
    /// `_wrapRunLoopWithAutoreleasePoolHandler` on Entry: pushes the run's pool. First of all.
    public static let autoreleasePoolPush = -2_147_483_647
    /// `_UIGestureRecognizerUpdateObserver` on BeforeWaiting: the event hook.
    public static let eventHook = 0
    /// `_beforeCACommitHandler`: work that must happen right before the commit.
    public static let beforeCommit = 1_999_000
    /// `CA::Transaction::observer_callback`: the commit of the implicit transaction.
    public static let commit = 2_000_000
    /// `_afterCACommitHandler`: work that must see the committed frame.
    public static let afterCommit = 2_001_000
    /// `_wrapRunLoopWithAutoreleasePoolHandler` on BeforeWaiting (pop + push) and Exit (pop).
    /// Last of all, so objects autoreleased by the commit die in the same turn.
    public static let autoreleasePoolPop = 2_147_483_647
}
