import CGLibRuntime

/// A reference to one of GLib's `GMainContext`s: the set of GLib sources one thread iterates.
///
/// The wrapper holds a reference (`g_main_context_ref`) for its lifetime. Create a new context,
/// take GLib's global default one (the one GTK and most of GIO use), or wrap a pointer obtained
/// from GLib's own API.
///
/// ```swift
/// let context = try GLibMainContext.defaultContext()
/// ```
public final class GLibMainContext {
    /// GLib's `GMainContext *`; pass it to GLib functions of your own bindings.
    public let pointer: OpaquePointer
    let glib: UnsafePointer<rlk_glib>

    /// A new, empty context (`g_main_context_new`).
    ///
    /// - Throws: ``GLibError/unavailable(_:)`` when GLib cannot be loaded.
    public init() throws(GLibError) {
        glib = try GLibLibrary.load()
        pointer = glib.pointee.g_main_context_new()
    }

    /// Wraps `context`, a `GMainContext *` from GLib's own API, taking a reference of its own.
    ///
    /// - Throws: ``GLibError/unavailable(_:)`` when GLib cannot be loaded.
    public init(retaining context: OpaquePointer) throws(GLibError) {
        glib = try GLibLibrary.load()
        pointer = glib.pointee.g_main_context_ref(context)
    }

    /// GLib's global default context (`g_main_context_default`), the one `g_main_loop_run` of a
    /// GTK application iterates.
    ///
    /// - Throws: ``GLibError/unavailable(_:)`` when GLib cannot be loaded.
    public static func defaultContext() throws(GLibError) -> GLibMainContext {
        let glib = try GLibLibrary.load()
        return try GLibMainContext(retaining: glib.pointee.g_main_context_default())
    }

    deinit { glib.pointee.g_main_context_unref(pointer) }

    /// Wakes the thread iterating the context (`g_main_context_wakeup`). Any thread.
    public func wakeUp() { glib.pointee.g_main_context_wakeup(pointer) }
}
