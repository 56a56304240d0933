import RunLoopCore

/// Why a GLib bridge could not be set up.
public enum GLibError: Error, CustomStringConvertible, Equatable, Sendable {
    /// GLib could not be loaded: `libglib-2.0.so.0` is missing, or lacks a function the bridge
    /// needs. The message is the loader's (`dlopen`/`dlsym`).
    case unavailable(String)
    /// `g_main_context_acquire` failed: another thread owns the context (it is iterating it).
    case contextOwnedByAnotherThread
    /// The loop runs on a virtual clock; GLib's timeouts are real time, so GLib needs a loop on
    /// the real clock.
    case virtualClock
    /// The call was made off the loop's own thread.
    case notOnLoopThread(String)
    /// GLib refused to create a source (`g_source_new` returned NULL).
    case sourceNotCreated
    /// A system call failed; nothing was changed.
    case systemCall(SystemCallError)
    /// The loop refused an item of the bridge (see `Loop.AddOutcome`).
    case itemRefused(String)
    /// This thread already hosts a loop in a GLib context: GLib's poll function cannot tell
    /// two apart.
    case alreadyHostingOnThisThread

    public var description: String {
        switch self {
        case .unavailable(let message): return message
        case .contextOwnedByAnotherThread: return "the GMainContext is owned by another thread (g_main_context_acquire failed)"
        case .virtualClock: return "the loop runs on a virtual clock; GLib's timeouts need a loop on the real clock"
        case .notOnLoopThread(let call): return "\(call) must be called on the loop's own thread"
        case .sourceNotCreated: return "g_source_new returned NULL"
        case .systemCall(let failure): return failure.description
        case .itemRefused(let what): return "the loop refused \(what)"
        case .alreadyHostingOnThisThread: return "this thread already hosts a loop in a GLib context"
        }
    }
}
