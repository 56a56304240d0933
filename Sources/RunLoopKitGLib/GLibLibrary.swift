import CGLibRuntime

/// GLib's functions, resolved at run time (`dlopen("libglib-2.0.so.0")`): the package needs no
/// GLib headers to build, and a program that never touches the bridge never loads GLib.
enum GLibLibrary {
    /// The function table; loaded on first use, once per process.
    ///
    /// - Throws: ``GLibError/unavailable(_:)`` with the loader's message when the library or one
    ///   of its functions is missing.
    static func load() throws(GLibError) -> UnsafePointer<rlk_glib> {
        var message: UnsafePointer<CChar>?
        guard let table = rlk_glib_load(&message) else {
            throw GLibError.unavailable(message.map { String(cString: $0) } ?? "GLib is not available")
        }
        return table
    }
}
