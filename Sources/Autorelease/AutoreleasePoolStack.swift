/// A stack of pools for code that pushes and pops from separate callbacks, such as run-loop
/// observers (Entry → push, BeforeWaiting → pop + push, Exit → pop) with nested runs.
/// Thread-confined: use it on the thread that created it.
///
/// ```swift
/// let pools = AutoreleasePoolStack()
/// pools.push()            // Entry
/// pools.popAndPush()      // BeforeWaiting
/// pools.pop()             // Exit
/// ```
public final class AutoreleasePoolStack {
    private var tokens: [UInt] = []
    /// The thread this stack belongs to.
    public let thread: UInt

    /// An empty stack bound to the calling thread.
    public init() {
        thread = currentThreadID()
        tokens.reserveCapacity(8)
    }

    /// Pools currently on this stack.
    public var depth: Int { tokens.count }

    /// Pushes a pool (a run's Entry).
    public func push() {
        tokens.append(AutoreleasePool.push().unsafeRaw)
    }

    /// Pops the most recent pool (a run's Exit). Does nothing on an empty stack.
    public func pop() {
        guard let raw = tokens.popLast() else { return }
        AutoreleasePool.pop(AutoreleasePool.Token(address: raw, thread: thread))
    }

    /// Pops the most recent pool and pushes a new one in its place (BeforeWaiting). With an
    /// empty stack it only pushes.
    public func popAndPush() {
        pop()
        push()
    }

    /// Pops every pool of this stack, innermost first.
    public func popAll() {
        while !tokens.isEmpty { pop() }
    }

    /// Runs `body` inside its own pool: the per-callout pool of modern CoreFoundation.
    @inlinable
    public func withCalloutPool<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try AutoreleasePool.withPool(body)
    }
}
