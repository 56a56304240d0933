// `deferCleanup` with no pool in place. objc4 would put an object on an implicit cold page that
// only the thread's exit drains, and the main thread never runs that drain. A cleanup there must
// not be lost: it is reported, kept on the implicit cold page, and the thread that calls exit()
// drains its pools from an atexit handler.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ThreadPool {
    /// Whether a pool is in place on the calling thread: the placeholder, or a boundary on the
    /// stack. Usually slot 0 of the cold page tells (O(depth)); only on a thread that
    /// autoreleased without a pool before (its cold page then starts with an object) does it
    /// scan down from the top for a boundary.
    static func hasPool(_ word: UInt) -> Bool {
        guard let hot = hotPage(word) else { return word & ThreadWord.placeholderBit != 0 }
        if hot.isEmpty && hot.depth == 0 { return false }
        var cold = verified(hot)
        while let parent = cold.parent { cold = verified(parent) }
        // The stack is not empty, so the cold page has a slot 0.
        if cold.entry(at: cold.begin) == Entry.boundary { return true }
        var page: PoolPage? = hot
        while let current = page {
            if containsBoundary(current) { return true }
            page = current.parent
        }
        return false
    }

    private static func containsBoundary(_ page: PoolPage) -> Bool {
        var slot = page.next
        while slot > page.begin {
            slot &-= 8
            if page.entry(at: slot) == Entry.boundary { return true }
        }
        return false
    }

    /// Stores `cleanup` with no pool in place (see `AutoreleasePool.deferCleanup`).
    static func addWithoutPool(_ cleanup: DeferredCleanup) {
        PoolDiagnostics.cleanupWithoutPool(label: cleanup.label)
        let word = loadWord()
        let flags = flags(of: word)
        let entry = UInt(bitPattern: Unmanaged.passRetained(cleanup).toOpaque())
        if flags & ThreadWord.missingPoolMask == 2 << ThreadWord.missingPoolShift {
            PoolDiagnostics.missingPool(entry: entry, fatal: true)
        }
        _ = exitDrainRegistered
        if hotPage(word) == nil {
            // The implicit cold page, whatever `missingPool` says: a cleanup is never leaked.
            storeWord(allocatePage(parent: nil).address | flags)
        }
        _ = addSlow(entry)
    }

    /// Registers, once per process, the atexit handler that drains the pools of the thread
    /// calling exit(): no pthread key destructor runs for that thread.
    static let exitDrainRegistered: Bool = {
        let status = atexit { ThreadPool.drainAtExit() }
        if status != 0 {
            PoolDiagnostics.systemCallFailed("atexit", status: status,
                                             consequence: "cleanups deferred with no pool on the thread that calls exit() will not run; call AutoreleasePool.drainThread() before exiting")
        }
        return status == 0
    }()

    static func drainAtExit() {
        if hotPage(loadWord()) != nil { drainAndFreeAll() }
    }
}
