// The public face of the pool. The fast paths are inlinable so a push, an autorelease or an
// empty pop costs one thread-local load and a few loads and stores in the caller.

/// objc4's page-based autorelease pool, per thread.
///
/// ```swift
/// let token = AutoreleasePool.push()
/// let node = AutoreleasePool.autorelease(Node())       // kept alive until the pop
/// AutoreleasePool.deferCleanup { close(fd) }          // runs at the pop, LIFO with objects
/// AutoreleasePool.pop(token)                           // releases node after closing fd
/// ```
public enum AutoreleasePool {
    /// Marks a pool on the thread that pushed it. Noncopyable: `pop` consumes it, so popping
    /// one token twice does not compile.
    ///
    /// ```swift
    /// let token = AutoreleasePool.push()
    /// print(token.address)     // the boundary slot, or 1 for the empty-pool placeholder
    /// AutoreleasePool.pop(token)
    /// ```
    @frozen
    public struct Token: ~Copyable {
        /// The boundary slot's address (objc4's token), or 1 for the empty-pool placeholder.
        public let address: UInt
        /// The pushing thread (its `pthread_t`).
        public let thread: UInt

        @inlinable
        init(address: UInt, thread: UInt) {
            self.address = address
            self.thread = thread
        }

        /// Rebuilds a token from `unsafeRaw` on the thread that pushed it: the escape hatch for
        /// keeping tokens in ordinary collections (see `AutoreleasePoolStack`). Nothing stops
        /// a raw value being popped twice; a checked pop then throws, an unchecked one traps.
        ///
        /// ```swift
        /// let raw = AutoreleasePool.push().unsafeRaw
        /// AutoreleasePool.pop(AutoreleasePool.Token(unsafeRaw: raw))
        /// ```
        @inlinable
        public init(unsafeRaw: UInt) {
            self.init(address: unsafeRaw, thread: currentThreadID())
        }

        /// The token's address as a plain integer (see `init(unsafeRaw:)`).
        @inlinable
        public var unsafeRaw: UInt { address }
    }

    /// Pushes a new pool on the calling thread's stack of pools (objc4 `objc_autoreleasePoolPush`).
    /// The first push on a thread allocates nothing and returns the placeholder token (address 1).
    ///
    /// ```swift
    /// let token = AutoreleasePool.push()
    /// defer_work()
    /// AutoreleasePool.pop(token)
    /// ```
    @inlinable
    public static func push() -> Token {
        let word = ThreadPool.loadWord()
        if let page = PoolPage(address: ThreadWord.page(word)) {
            let next = page.next
            if next != page.end {
                page.setEntry(Entry.boundary, at: next)
                page.next = next &+ 8
                return Token(address: next, thread: page.thread)
            }
        }
        return Token(address: ThreadPool.addSlow(Entry.boundary), thread: currentThreadID())
    }

    /// Pops `token`'s pool and every pool pushed after it, releasing their objects and running
    /// their cleanups strictly LIFO (objc4 `objc_autoreleasePoolPop`). A token that is not a live
    /// pool of this thread is reported (`pool.bad-pop`, with objc4's "Invalid or
    /// prematurely-freed autorelease pool" text) and traps; so does a page whose magic was
    /// overwritten (`pool.page-corrupted`).
    ///
    /// Every pop that leaves the inlined fast path checks each page it reaches. The fast path,
    /// an empty pool on the hot page, reaches that page through the thread's own word, never
    /// through the token, and only accepts a token exactly below `next` on a boundary slot; it
    /// checks the page's magic in debug builds only, so that an empty push + pop stays as cheap
    /// as before.
    ///
    /// ```swift
    /// AutoreleasePool.pop(token)
    /// ```
    @inlinable
    public static func pop(_ token: consuming Token) {
        let address = token.address
        let thread = token.thread
        let word = ThreadPool.loadWord()
        // Fast path: an empty pool on the hot page with no cached child and no tracking. One
        // compare checks "the token is on the hot page", "high-water tracking is off" and "the
        // missing-pool diagnostic is off" (with it on, a drained cold page goes away).
        // The page is addressed through the word, not the token. The token comes from the
        // push's load of `next`, so a store to `page.next` addressed through it has its address
        // late, when the next push already wants to load `next`; so addressed, an empty
        // push + pop ran at 4.2 ns for minutes at a time instead of 1.5 ns (Docs/Benchmarks.md,
        // "The empty push + pop's two speeds").
        if word & (PageLayout.pageMask | ThreadWord.highWaterMask | ThreadWord.missingPoolMask) == address & PageLayout.pageMask,
           let page = PoolPage(address: word & PageLayout.pageMask),
           page.entry(at: address) == Entry.boundary, page.thread == thread, page.child == nil
        {
            if page.next == address &+ 8, fastPathChecks(page) {
                page.setEntry(PageLayout.scribble, at: address)
                page.next = address
                return
            }
            // A pool with something to release on the hot page: one out-of-line call that
            // checks only what the tests above left open (the page's magic, where the token
            // sits), with no hop.
            if ThreadPool.popAboveBoundary(address: address, on: page) { return }
        }
        popSlow(address: address, thread: thread, word: word)
    }

    /// The page check of the empty-pop fast path: the full check in debug builds, none in
    /// release builds (every other pop path checks, see `pop(_:)`).
    @inlinable @inline(__always)
    static func fastPathChecks(_ page: PoolPage) -> Bool {
        #if DEBUG || AUTORELEASE_INTERNAL_CHECKS
        return page.passesCheck
        #else
        return true
        #endif
    }

    /// The pops the inlined paths declined: the placeholder, a pool on the hot page that the
    /// inlined tests did not reach, then everything else.
    @usableFromInline @inline(never)
    static func popSlow(address: UInt, thread: UInt, word: UInt) {
        if address == 1, ThreadPool.popPlaceholder(thread: thread, word: word) { return }
        if ThreadPool.popOnHotPage(address: address, thread: thread, word: word) { return }
        popAnywhere(address: address, thread: thread, word: word)
    }

    /// Every other pop: a token below the hot page, a cached child, high-water tracking, or
    /// bad input (reported, then fatal). Apart from `popSlow`, whose frame stays small.
    @inline(never)
    static func popAnywhere(address: UInt, thread: UInt, word: UInt) {
        do {
            try ThreadPool.pop(address: address, thread: thread, word: word)
        } catch {
            PoolDiagnostics.badPop(address, reason: error)
        }
    }

    /// Pops like `pop(_:)` after checking that the token is a live pool of this thread. On a
    /// token from another thread, a stale or a forged token, or a corrupted page on the way to
    /// the token's page, it throws an error naming the token and the threads, and releases
    /// nothing.
    ///
    /// ```swift
    /// do { try AutoreleasePool.checkedPop(token) }
    /// catch { print(error) }   // "autorelease pool token 0x… was pushed on thread 0x… but popped on …"
    /// ```
    public static func checkedPop(_ token: consuming Token) throws(AutoreleasePoolError) {
        let word = ThreadPool.loadWord()
        if ThreadPool.popOnHotPage(address: token.address, thread: token.thread, word: word) { return }
        try ThreadPool.pop(address: token.address, thread: token.thread, word: word)
    }

    /// Pops `token`'s pool and pushes a new one: the BeforeWaiting step of the classic
    /// run-loop observer.
    ///
    /// ```swift
    /// token = AutoreleasePool.popAndPush(token)
    /// ```
    @inlinable
    public static func popAndPush(_ token: consuming Token) -> Token {
        pop(token)
        return push()
    }

    /// Keeps `object` alive until the innermost pool pops (the pool takes its own strong
    /// reference) and returns it. With no pool, objc4's default applies: the object goes to an
    /// implicit cold page drained at thread exit (see `configuration.missingPool`).
    ///
    /// ```swift
    /// let buffer = AutoreleasePool.autorelease(Buffer(capacity: 4096))
    /// ```
    @inlinable @inline(__always) @discardableResult
    public static func autorelease<T: AnyObject>(_ object: T) -> T {
        let unmanaged = Unmanaged.passUnretained(object)
        addEntry(UInt(bitPattern: unmanaged.toOpaque()))
        // The pool's reference, taken after the add (the caller keeps `object` alive meanwhile):
        // next to the copy returned, the optimiser can cancel that copy against a caller that
        // drops the result, which it cannot do across the add's out-of-line calls.
        _ = unmanaged.retain()
        return object
    }

    /// `autorelease(_:)` for an optional: `nil` adds nothing and is returned unchanged (objc4's
    /// `objc_autorelease(nil)`).
    ///
    /// ```swift
    /// let cached: Node? = AutoreleasePool.autorelease(cache[key])
    /// ```
    @inlinable @discardableResult
    public static func autorelease<T: AnyObject>(_ object: T?) -> T? {
        guard let object else { return nil }
        let retained: T = autorelease(object)
        return retained
    }

    /// Hands an owned reference to the pool without retaining it again: the caller gives up
    /// `object`. The cheapest way to autorelease a freshly created object.
    ///
    /// ```swift
    /// AutoreleasePool.autorelease(consuming: Node())
    /// ```
    @inlinable @inline(__always)
    public static func autorelease<T: AnyObject>(consuming object: consuming T) {
        let word = ThreadPool.loadWord()
        if let page = PoolPage(address: ThreadWord.page(word)) {
            let next = page.next
            if next != page.end {
                // Move the caller's reference into the free slot: no retain, no release. An
                // object is never the boundary (0), so this goes straight to the coalescing
                // check; on a miss the slot already holds the entry and only `next` moves.
                let entry = UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
                page.moveObject(object, to: next)
                if ThreadPool.coalesce(entry, page: page, next: next, flags: word) == 0 {
                    page.next = next &+ 8
                }
                return
            }
        }
        // Rare: a new page (or no pool). The retain pairs with the release of `object` here.
        _ = ThreadPool.addSlow(UInt(bitPattern: Unmanaged.passRetained(object).toOpaque()))
    }

    @inlinable @inline(__always)
    static func addEntry(_ entry: UInt) {
        let word = ThreadPool.loadWord()
        if let page = PoolPage(address: ThreadWord.page(word)), page.next != page.end {
            _ = ThreadPool.add(entry, to: page, flags: word)
            return
        }
        // Returns 0 under the missing-pool diagnostic: objc4 then leaks the object, and the
        // retain taken by the caller is exactly that leak.
        _ = ThreadPool.addSlow(entry)
    }

    /// Runs `work` when the innermost pool pops, in LIFO order with the objects autoreleased
    /// around it: the service pattern for closing descriptors or returning buffers per turn.
    ///
    /// With no pool in place (no push on this thread, or every pool popped) the cleanup is not
    /// lost: it is reported (`pool.cleanup-without-pool`) and kept on the thread's implicit cold
    /// page, like an object autoreleased without a pool, and runs when the thread exits, when
    /// the thread calls `exit()` (for the main thread: when `main` returns) or at
    /// `drainThread()`, whichever comes first. This holds under every `missingPool` setting
    /// except `.fatal`, which traps as for an object.
    ///
    /// ```swift
    /// let fd = open(path, O_RDONLY)
    /// AutoreleasePool.deferCleanup(label: "close log fd") { close(fd) }
    /// ```
    public static func deferCleanup(label: String = "DeferredCleanup", _ work: @escaping () -> Void) {
        let cleanup = DeferredCleanup(label: label, work: work)
        if _slowPath(!ThreadPool.hasPool(ThreadPool.loadWord())) {
            ThreadPool.addWithoutPool(cleanup)
            return
        }
        autorelease(consuming: cleanup)
    }

    /// Pops every pool of the calling thread (LIFO, exactly as at thread exit) and frees all its
    /// pages, the cold page included. For threads that never exit, such as the main thread of a
    /// program checked with a leak detector. Tokens pushed before become invalid.
    ///
    /// ```swift
    /// AutoreleasePool.drainThread()
    /// assert(AutoreleasePool.statistics.pages == 0)
    /// ```
    public static func drainThread() {
        ThreadPool.drainAndFreeAll()
    }

    /// Runs `body` inside its own pool and pops it afterwards, also when `body` throws (the
    /// same as the free function `withAutoreleasePool(_:)`).
    ///
    /// ```swift
    /// let total = AutoreleasePool.withPool { parse(file) }
    /// ```
    @inlinable
    public static func withPool<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        let token = push()
        let result: R
        do {
            result = try body()
        } catch {
            pop(token)
            throw error
        }
        pop(token)
        return result
    }
}

/// Runs `body` in a new autorelease pool and pops it afterwards, also when `body` throws: this
/// module's counterpart of Darwin's `autoreleasepool(invoking:)`, named so that it does not
/// collide with Foundation's on any platform.
///
/// ```swift
/// let lines = withAutoreleasePool { readLines(from: file) }
/// ```
@inlinable
public func withAutoreleasePool<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    try AutoreleasePool.withPool(body)
}
