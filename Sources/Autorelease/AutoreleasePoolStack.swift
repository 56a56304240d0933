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
    // Raw token addresses in a plain growable buffer (no Array: nothing to allocate per push
    // once the capacity is reached, and no generic metadata for a leak checker to report).
    private var tokens: UnsafeMutablePointer<UInt>
    private var capacity = 8
    /// Pools currently on this stack.
    public private(set) var depth = 0
    /// The thread this stack belongs to.
    public let thread: UInt

    /// An empty stack bound to the calling thread.
    public init() {
        thread = currentThreadID()
        tokens = .allocate(capacity: capacity)
    }

    deinit { tokens.deallocate() }

    /// Pushes a pool (a run's Entry).
    public func push() {
        if depth == capacity {
            let larger = UnsafeMutablePointer<UInt>.allocate(capacity: capacity * 2)
            larger.update(from: tokens, count: depth)
            tokens.deallocate()
            tokens = larger
            capacity *= 2
        }
        tokens[depth] = AutoreleasePool.push().unsafeRaw
        depth += 1
    }

    /// Pops the most recent pool (a run's Exit). Does nothing on an empty stack.
    public func pop() {
        guard depth > 0 else { return }
        depth -= 1
        AutoreleasePool.pop(AutoreleasePool.Token(address: tokens[depth], thread: thread))
    }

    /// Pops the most recent pool and pushes a new one in its place (BeforeWaiting). With an
    /// empty stack it only pushes.
    public func popAndPush() {
        pop()
        push()
    }

    /// Pops every pool of this stack, innermost first.
    public func popAll() {
        while depth > 0 { pop() }
    }

    /// Runs `body` inside its own pool: the per-callout pool of modern CoreFoundation.
    @inlinable
    public func withCalloutPool<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try AutoreleasePool.withPool(body)
    }
}
