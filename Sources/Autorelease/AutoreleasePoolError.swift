/// Why `AutoreleasePool.checkedPop(_:)` refused a token. Nothing was released.
///
/// ```swift
/// do { try AutoreleasePool.checkedPop(token) } catch { print(error) }
/// ```
public enum AutoreleasePoolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The token was pushed on another thread.
    case wrongThread(token: UInt, pushedOn: UInt, poppedOn: UInt)
    /// The token points into this thread's pages but its pool was already popped.
    case staleToken(token: UInt, thread: UInt)
    /// The token is not in any page of this thread's pools (forged, or its page was freed).
    case unknownToken(token: UInt, thread: UInt)
    /// A page of this thread's pools, reached while looking for the token, failed its magic check
    /// (objc4's "autorelease pool page corrupted"): memory was overwritten.
    case corruptedPage(page: UInt, token: UInt, thread: UInt)

    /// The refused token's address.
    ///
    /// ```swift
    /// catch { print(String(error.token, radix: 16)) }
    /// ```
    public var token: UInt {
        switch self {
        case let .wrongThread(token, _, _), let .staleToken(token, _), let .unknownToken(token, _),
             let .corruptedPage(_, token, _): token
        }
    }

    /// One sentence naming the token, the thread(s) (and a corrupted page) and saying that nothing
    /// was released.
    public var description: String {
        switch self {
        case let .wrongThread(token, pushedOn, poppedOn):
            "autorelease pool token \(hex(token)) was pushed on thread \(hex(pushedOn)) but popped on thread \(hex(poppedOn)); nothing was released"
        case let .staleToken(token, thread):
            "autorelease pool token \(hex(token)) on thread \(hex(thread)) is stale: its pool was already popped; nothing was released"
        case let .unknownToken(token, thread):
            "autorelease pool token \(hex(token)) is not a pool of thread \(hex(thread)) (forged, or its page was freed); nothing was released"
        case let .corruptedPage(page, token, thread):
            "autorelease pool page \(hex(page)) of thread \(hex(thread)) is corrupted (its magic was overwritten), found while popping token \(hex(token)); nothing was released"
        }
    }
}
