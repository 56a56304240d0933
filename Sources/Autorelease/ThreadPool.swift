// The per-thread pool: the thread word, the slow paths of push/autorelease/pop, hysteresis
// and the thread-exit drain. Everything here runs on the owning thread only (the state is
// thread-local), so nothing needs a lock.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CPoolThreadWord

/// A key that is non-nil exactly while the thread has a page. The word itself lives in a C
/// thread-local (`rlk_pool_thread_word`, one load on the fast paths; still readable while key
/// destructors run); the key exists for its destructor, which glibc calls at thread exit while
/// the value is non-nil: it drains every pool of the exiting thread LIFO and frees all its
/// pages. A thread with no page, or only the placeholder, has nothing to drain.
let hotPageKey: pthread_key_t = makeKey { _ in
    ThreadPool.threadDidExit()
}

func makeKey(destructor: @escaping @convention(c) (UnsafeMutableRawPointer?) -> Void) -> pthread_key_t {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, destructor)
    if status != 0 {
        PoolDiagnostics.fatalSystemCallFailure("pthread_key_create", status: status,
                                               consequence: "the pool cannot drain threads at exit")
    }
    return key
}

/// The calling thread's identity as stored in a page header.
@usableFromInline
func currentThreadID() -> UInt {
    #if canImport(Glibc)
    return UInt(pthread_self())
    #else
    return UInt(bitPattern: pthread_self())
    #endif
}

@usableFromInline
enum ThreadPool {
    // MARK: The thread word

    @inlinable @inline(__always)
    static func loadWord() -> UInt {
        UInt(rlk_pool_load_word())
    }

    /// Stores the word in the thread-local. The key changes only when the thread gains its
    /// first page or loses its last, so the exit destructor runs exactly when the thread has
    /// something to drain, and a placeholder push + pop makes no call. Slow paths only.
    static func storeWord(_ word: UInt) {
        let hadPage = rlk_pool_load_word() & PageLayout.pageMask != 0
        rlk_pool_store_word(word)
        let hasPage = word & PageLayout.pageMask != 0
        if hasPage != hadPage { armExitDrain(hasPage) }
    }

    /// Sets the key to a non-nil marker (`armed`) or to nil.
    @inline(never)
    static func armExitDrain(_ armed: Bool) {
        let status = pthread_setspecific(hotPageKey, armed ? UnsafeRawPointer(bitPattern: 1) : nil)
        if status != 0 {
            PoolDiagnostics.systemCallFailed("pthread_setspecific", status: status,
                                             consequence: "this thread's pools may not be drained when it exits; call AutoreleasePool.drainThread() before it does")
        }
    }

    /// The thread's flags, taking the process defaults for a thread that never set them.
    static func flags(of word: UInt) -> UInt {
        word & ThreadWord.initialisedBit != 0 ? ThreadWord.flags(word) & ~ThreadWord.placeholderBit
            : defaultFlags.load(ordering: .relaxed)
    }

    static func currentFlags() -> UInt { flags(of: loadWord()) }

    static func setFlags(_ flags: UInt) {
        let word = loadWord()
        storeWord((word & (PageLayout.pageMask | ThreadWord.placeholderBit)) | flags)
    }

    static func hotPage(_ word: UInt) -> PoolPage? { PoolPage(address: ThreadWord.page(word)) }

    /// `page` if it passes its check; otherwise reports the corruption and traps (pop paths).
    @inline(__always)
    static func verified(_ page: PoolPage) -> PoolPage {
        guard page.passesCheck else { PoolDiagnostics.corruptPage(page) }
        return page
    }

    // MARK: Adding (objc4 autoreleaseFast / add)

    /// Adds `entry` to a page that is not full; coalesces as the thread's mode says.
    /// Returns the slot the entry ended up in.
    @inlinable @inline(__always)
    static func add(_ entry: UInt, to page: PoolPage, flags: UInt) -> UInt {
        let next = page.next
        if entry != Entry.boundary {
            let slot = coalesce(entry, page: page, next: next, flags: flags)
            if slot != 0 { return slot }
        }
        page.setEntry(entry, at: next)
        page.next = next &+ 8
        return next
    }

    /// Tries to fold the object `entry` into a recent entry of the page whose first free slot is
    /// `next` (objc4 `add()`'s coalescing). Returns the slot it went to, or 0 when it needs a slot
    /// of its own. Written for few instructions on the LRU miss, the path of every new object.
    @inlinable @inline(__always)
    static func coalesce(_ entry: UInt, page: PoolPage, next: UInt, flags: UInt) -> UInt {
        let top = next &- 8
        let begin = page.begin
        if _fastPath(flags & ThreadWord.coalescingMask == 0) {
            // LRU: the 4 most recent entries, never slot 0, stopping at a boundary.
            if _fastPath(top &- 24 > begin) {
                // All four candidates lie above slot 0 (the usual case). A miss, the path of every
                // new object, costs 4 loads and a single branch on the `min` of the keys (one
                // branch measured faster than testing the top entry first). On a candidate, the
                // top entry (the same object again, the common hit) is handled here. A boundary's
                // key never matches, so boundaries only matter when a lower entry matches: the
                // exact scan sorts that out.
                let found = page.entry(at: top)
                let topKey = Entry.coalescingKey(found, entry)
                let lowest = Swift.min(Swift.min(topKey, Entry.coalescingKey(page.entry(at: top &- 8), entry)),
                                       Swift.min(Entry.coalescingKey(page.entry(at: top &- 16), entry),
                                                 Entry.coalescingKey(page.entry(at: top &- 24), entry)))
                if _fastPath(lowest >= Entry.maxCount) { return 0 }
                if topKey < Entry.maxCount {
                    page.setEntry(found &+ Entry.countUnit, at: top)
                    return top
                }
                return coalesceLRU(entry, page: page, top: top)
            }
            // Fewer than 4 examinable entries: the empty page and slot 0 are never examined.
            if top <= begin { return 0 }
            let found = page.entry(at: top)
            if Entry.coalescingKey(found, entry) < Entry.maxCount {
                page.setEntry(found &+ Entry.countUnit, at: top)
                return top
            }
            if found == Entry.boundary { return 0 }
            return coalesceLRU(entry, page: page, top: top)
        }
        if flags & ThreadWord.coalescingMask == 1 << ThreadWord.coalescingShift && next != begin {
            // Top only: slot 0 included.
            let found = page.entry(at: top)
            if Entry.coalescingKey(found, entry) < Entry.maxCount {
                page.setEntry(found &+ Entry.countUnit, at: top)
                return top
            }
        }
        return 0
    }

    /// objc4's LRU scan, exactly: offsets 0...3 below `next`, stopping at slot 0 (never examined)
    /// or a boundary; a match whose count is below the maximum moves to the top with its count
    /// incremented (the entries above it shift down one slot). Returns the top slot on a match,
    /// 0 otherwise. Out of line: only reached when a candidate was seen, or on a page with under
    /// 5 entries.
    @usableFromInline @inline(never)
    static func coalesceLRU(_ entry: UInt, page: PoolPage, top: UInt) -> UInt {
        var slot = top
        var offset: UInt = 0
        while offset < 4 && slot > page.begin {
            let found = page.entry(at: slot)
            if found == Entry.boundary { return 0 }
            if Entry.coalescingKey(found, entry) < Entry.maxCount {
                page.shiftDown(onto: slot, count: Int(offset))
                page.setEntry(found &+ Entry.countUnit, at: top)
                return top
            }
            slot &-= 8
            offset &+= 1
        }
        return 0
    }

    /// objc4's autoreleaseFullPage / autoreleaseNoPage. Returns the slot address, 1 for the
    /// empty-pool placeholder, or 0 when the entry was not stored (missing-pool diagnostic).
    @usableFromInline @inline(never)
    static func addSlow(_ entry: UInt) -> UInt {
        let word = loadWord()
        let flags = flags(of: word)
        if var page = hotPage(word) {
            if !page.isFull { return add(entry, to: page, flags: flags) }
            repeat { page = page.child ?? allocatePage(parent: page) } while page.isFull
            storeWord(page.address | flags)
            return add(entry, to: page, flags: flags)
        }
        var pushExtraBoundary = false
        if word & ThreadWord.placeholderBit != 0 {
            // One pool was pushed as a placeholder: it needs its boundary now.
            pushExtraBoundary = true
        } else if entry != Entry.boundary && flags & ThreadWord.missingPoolMask != 0 {
            PoolDiagnostics.missingPool(entry: entry, fatal: flags & ThreadWord.missingPoolMask == 2 << ThreadWord.missingPoolShift)
            return 0
        } else if entry == Entry.boundary {
            // The first push allocates nothing.
            storeWord(flags | ThreadWord.placeholderBit)
            return 1
        }
        let page = allocatePage(parent: nil)
        storeWord(page.address | flags)
        if pushExtraBoundary { _ = add(Entry.boundary, to: page, flags: flags) }
        return add(entry, to: page, flags: flags)
    }

    static func allocatePage(parent: PoolPage?) -> PoolPage {
        let state = ThreadState.current
        state.samplePeakEntries()
        let page = PoolPage.allocate(parent: parent, thread: currentThreadID())
        state.pagesChanged(by: 1)
        return page
    }

    // MARK: Popping (objc4 pop / popPage / releaseUntil)

    /// Why a token cannot be popped, or nil if it can (then `page`/`stop` are set). Inlined
    /// into `pop`: a call with this tuple result cost about 20 instructions per pop.
    ///
    /// The token is never dereferenced before its page has been found in the thread's own chain,
    /// and every page of the chain is checked (`PoolPage.passesCheck`) before its header is
    /// followed: a forged token is unknown, an overwritten page is reported as corrupted.
    @inline(__always)
    static func locate(address: UInt, thread: UInt, word: UInt) -> (page: PoolPage?, stop: UInt, problem: AutoreleasePoolError?) {
        let me = currentThreadID()
        if thread != me {
            return (nil, 0, .wrongThread(token: address, pushedOn: thread, poppedOn: me))
        }
        if address == 1 {
            guard let hot = hotPage(word) else {
                if word & ThreadWord.placeholderBit != 0 { return (nil, 0, nil) }
                return (nil, 0, .staleToken(token: address, thread: me))
            }
            do {
                let cold = try hot.checkedColdest()
                return (cold, cold.begin, nil)
            } catch {
                return (nil, 0, .corruptedPage(page: error.address, token: address, thread: me))
            }
        }
        // A plain loop rather than `checked()`: the typed-throw plumbing cost ~10 instructions
        // per pop here.
        var candidate = hotPage(word)
        let pageAddress = address & PageLayout.pageMask
        while let page = candidate {
            guard page.passesCheck else {
                return (nil, 0, .corruptedPage(page: page.address, token: address, thread: me))
            }
            if page.address == pageAddress { break }
            candidate = page.parent
        }
        guard let page = candidate else {
            return (nil, 0, .unknownToken(token: address, thread: me))
        }
        guard address >= page.begin, address < page.next, (address &- page.begin) % 8 == 0 else {
            return (nil, 0, .staleToken(token: address, thread: me))
        }
        // A no-pool object in slot 0 of the cold page is the one non-boundary stop objc4 allows.
        if page.entry(at: address) != Entry.boundary && !(address == page.begin && page.parent == nil) {
            return (nil, 0, .staleToken(token: address, thread: me))
        }
        return (page, address, nil)
    }

    /// Pops the pool whose token is `address` (and every pool pushed after it).
    /// Throws without touching anything when the token is not a live pool of this thread.
    @usableFromInline @inline(never)
    static func pop(address: UInt, thread: UInt, word: UInt) throws(AutoreleasePoolError) {
        let (target, stop, problem) = locate(address: address, thread: thread, word: word)
        if let problem { throw problem }
        guard let page = target else {
            // Popping the placeholder with nothing added: clear it (objc4 setHotPage(nil)).
            storeWord(flags(of: word))
            return
        }
        let flags = flags(of: word)
        if flags & ThreadWord.highWaterMask != 0, let hot = hotPage(word) {
            HighWater.update(hot: hot, report: flags & ThreadWord.highWaterMask == 2 << ThreadWord.highWaterShift)
        }
        let state = ThreadState.current
        state.samplePeakEntries(word)
        releaseUntil(page: page, stop: stop, state: state, word: word)
        if flags & ThreadWord.missingPoolMask != 0 && page.isEmpty && page.parent == nil {
            // With the missing-pool diagnostic on, a drained cold page goes away so that a
            // later autorelease with no pool is reported instead of landing here silently.
            state.pagesChanged(by: -page.killWithChildren())
            storeWord(flags)
            state.publish(flags)
            return
        }
        trimChildren(of: page, state: state)
        // releaseUntil left `page` as the hot page.
        state.publish(page.address)
    }

    /// The common pop: the token is a boundary on the hot page, which has no cached child, and
    /// high-water tracking and the missing-pool diagnostic are off (the outermost pool's token
    /// is the page's first slot). The page comes from the thread's own word, so there is no
    /// walk of the chain and no thread-id call (the hot page's header names this thread); the
    /// page passes the same check as on every pop path. Returns false, having touched nothing,
    /// in every other case, which `pop(address:thread:word:)` then sorts out. Out of line and
    /// apart from `pop` so that its frame stays small.
    @usableFromInline @inline(never)
    static func popOnHotPage(address: UInt, thread: UInt, word: UInt) -> Bool {
        guard word & (ThreadWord.highWaterMask | ThreadWord.missingPoolMask) == 0, let hot = hotPage(word),
              address & PageLayout.pageMask == hot.address, hot.thread == thread,
              hot.entry(at: address) == Entry.boundary, hot.child == nil
        else { return false }
        return popAboveBoundary(address: address, on: hot)
    }

    /// `popOnHotPage` once the inlined `pop` has found the token on the hot page (reached
    /// through the thread's word) with no tracking on, a boundary at the token, this thread's
    /// id in the page and no cached child: checks the rest (the page's magic; the token inside
    /// the slots, aligned, below `next`) and pops. False, having touched nothing, when a check
    /// fails.
    @usableFromInline @inline(never)
    static func popAboveBoundary(address: UInt, on hot: PoolPage) -> Bool {
        // The stack top is read once and then carried in a register: each step's slot comes
        // from the last one, not from a load of `next` that waits for the store before it.
        // `next` is read again only to see whether a release added entries. Little else stays
        // live across the releases (the thread state and the counts are read again after
        // them), so that the loop keeps its values in registers.
        var top = hot.next
        guard hot.passesCheck, address >= hot.begin, address < top, address & 7 == 0 else { return false }
        ThreadState.current.samplePeakEntries(pendingEntries(hot, next: top))
        // Entries above the token, hottest first, as `releaseUntil` does; the token's own
        // boundary last. A release that left entries behind (a deinit that autoreleased) hands
        // the rest to `releaseUntil`, which re-reads the hot page after every release.
        let firstObject = address &+ 8
        while top != firstObject {
            let slot = top &- 8
            hot.next = slot
            let entry = hot.entry(at: slot)
            hot.setEntry(PageLayout.scribble, at: slot)
            if entry != Entry.boundary {
                release(entry)
                if _slowPath(hot.next != slot) {
                    let state = ThreadState.current
                    releaseRest(page: hot, stop: address, state: state)
                    trimChildren(of: hot, state: state)
                    state.publish(hot.address)
                    return true
                }
            }
            top = slot
        }
        hot.next = address
        hot.setEntry(PageLayout.scribble, at: address)
        let state = ThreadState.current
        // A deinit may have filled the page and so made a child (and popped back to where it
        // was).
        trimChildren(of: hot, state: state)
        state.publish(entries: pendingEntries(hot, next: address))
        return true
    }

    /// `pendingEntries` of a thread whose hot page is `hot`, with `next` already read.
    @inline(__always)
    static func pendingEntries(_ hot: PoolPage, next: UInt) -> Int {
        Int(hot.depth) &* PageLayout.slotCount &+ Int(bitPattern: (next &- hot.begin) / 8)
    }

    /// Pops the placeholder pool (token 1) of a thread that has no page, which is what an
    /// outermost push + pop that added nothing leaves: objc4's setHotPage(nil), without the
    /// general path's token search. False, having touched nothing, in every other case.
    @inline(__always)
    static func popPlaceholder(thread: UInt, word: UInt) -> Bool {
        guard word & (PageLayout.pageMask | ThreadWord.placeholderBit) == ThreadWord.placeholderBit,
              thread == currentThreadID()
        else { return false }
        storeWord(flags(of: word))
        return true
    }

    /// `releaseUntil` after a release left entries behind (out of line: rare).
    @inline(never)
    static func releaseRest(page: PoolPage, stop: UInt, state: ThreadState) {
        let word = loadWord()
        state.samplePeakEntries(word)
        releaseUntil(page: page, stop: stop, state: state, word: word)
    }

    /// Releases the object of a non-boundary entry once, plus once per coalesced autorelease.
    @inline(__always)
    static func release(_ entry: UInt) {
        let object = Entry.object(entry)
        var releases = Entry.count(entry)
        while true {
            object.release()
            if releases == 0 { break }
            releases &-= 1
        }
    }

    /// objc4's hysteresis after a pop: a page under half full keeps no child; a fuller one
    /// keeps one empty child.
    @inline(__always)
    static func trimChildren(of page: PoolPage, state: ThreadState) {
        // The usual case, no child, first: one load.
        guard let child = page.child else { return }
        if page.isLessThanHalfFull {
            state.pagesChanged(by: -child.killWithChildren())
        } else if let grandchild = verified(child).child {
            state.pagesChanged(by: -grandchild.killWithChildren())
        }
    }

    /// Takes the hottest entry off `page`, scribbling its slot, and releases it unless it is a
    /// boundary. False when the release left entries behind (a deinit autoreleased), which
    /// moved `next` again; both pop loops then re-read where they stand.
    @inline(__always)
    static func releaseHottest(of page: PoolPage) -> Bool {
        let slot = page.next &- 8
        page.next = slot
        let entry = page.entry(at: slot)
        page.setEntry(PageLayout.scribble, at: slot)
        guard entry != Entry.boundary else { return true }
        release(entry)
        return page.next == slot
    }

    /// Releases entries, hottest first, until `page.next == stop`. Re-reads the hot page every
    /// time because a release may autorelease more objects; those are released by this loop too.
    @inline(__always)
    static func releaseUntil(page: PoolPage, stop: UInt, state: ThreadState, word currentWord: UInt) {
        var word = currentWord
        while page.next != stop {
            guard var hot = hotPage(word) else { popInterrupted(stop: stop, pastColdPage: false) }
            while hot.isEmpty {
                guard let parent = hot.parent else { popInterrupted(stop: stop, pastColdPage: true) }
                hot = verified(parent)
                word = hot.address | ThreadWord.flags(word)
                storeWord(word)
            }
            // A release that left entries behind (on this page, or on a hotter one once this one
            // filled up) moved `next`: re-read the hot page, and those entries may have raised
            // the total above the last peak. A balanced push/pop inside a deinit leaves both as
            // they were. (Draining the thread from a deinit is not supported.)
            if !releaseHottest(of: hot) {
                word = loadWord()
                state.samplePeakEntries(word)
            }
        }
        if ThreadWord.page(word) != page.address { storeWord(page.address | ThreadWord.flags(word)) }
    }

    /// A deinit broke the pop under way (out of line: the messages stay off the release loop).
    @inline(never)
    static func popInterrupted(stop: UInt, pastColdPage: Bool) -> Never {
        let message = pastColdPage ? "ran past the cold page while popping \(hex(stop))"
            : "the hot page vanished while popping \(hex(stop)) (a deinit popped an outer pool or drained the thread?)"
        PoolDiagnostics.fatal("pool.pop-interrupted", message, item: hex(stop))
    }

    // MARK: Thread exit (objc4 HotPageDealloc)

    /// The key's destructor. glibc has cleared the key; the word still names the pages. A
    /// deinit that autoreleases with no pool left makes a new page, which sets the key again,
    /// so glibc calls this once more (up to PTHREAD_DESTRUCTOR_ITERATIONS times).
    static func threadDidExit() {
        let word = loadWord()
        guard hotPage(word) != nil else { return }
        drainAndFreeAll()
        rlk_pool_store_word(0)
    }

    /// Releases every entry of the thread, LIFO, frees every page and leaves the thread with
    /// no page (flags kept).
    static func drainAndFreeAll() {
        let word = loadWord()
        guard let hot = hotPage(word) else {
            storeWord(flags(of: word))
            return
        }
        let state = ThreadState.current
        state.samplePeakEntries()
        let cold: PoolPage
        do { cold = try hot.checkedColdest() } catch { PoolDiagnostics.corruptPage(error.page) }
        if !cold.isEmpty { releaseUntil(page: cold, stop: cold.begin, state: state, word: word) }
        state.pagesChanged(by: -cold.killWithChildren())
        storeWord(flags(of: loadWord()))
        state.publish()
    }

    // MARK: Measuring

    /// Used slots over the hot page and its ancestors (objc4's "releases pending"). Every
    /// ancestor of the hot page is full (a child is only entered from a full page, and a page is
    /// only left for its parent once empty), so this is O(1).
    static func pendingEntries(_ word: UInt) -> Int {
        guard let hot = hotPage(word) else { return 0 }
        return Int(hot.depth) * PageLayout.slotCount + hot.usedSlots
    }

    /// Releases pop would perform now: objects and cleanups, counting coalesced counts. A
    /// corrupted page is reported and ends the count.
    static func pendingReleases(_ word: UInt) -> Int {
        var total = 0
        do {
            var page = try hotPage(word)?.checked()
            while let current = page {
                var slot = current.begin
                while slot < current.next {
                    let entry = current.entry(at: slot)
                    if entry != Entry.boundary { total += Int(Entry.count(entry)) + 1 }
                    slot &+= 8
                }
                page = try current.checkedParent()
            }
        } catch {
            PoolDiagnostics.reportCorruptPage(error.page)
        }
        return total
    }
}
