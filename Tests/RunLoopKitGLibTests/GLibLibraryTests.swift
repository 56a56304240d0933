import CGLibRuntime
import Testing
@testable import RunLoopKitGLib

/// GLib reached at run time: the loader's outcome and its messages.
@Suite("GLibLibrary")
struct GLibLibraryTests {
    @Test("This machine's libglib-2.0.so.0 loads and has every function the bridge uses")
    func loads() throws {
        let glib = try GLibLibrary.load()
        #expect(glib.pointee.g_get_monotonic_time() > 0)
    }

    /// The loader's message for `library`; "" when it loaded.
    static func failure(loading library: String) -> String {
        // The table is written by C only; its fields are function pointers Swift never reads here.
        let table = UnsafeMutablePointer<rlk_glib>.allocate(capacity: 1)
        defer { table.deallocate() }
        var message = [CChar](repeating: 0, count: 512)
        guard rlk_glib_load_from(library, table, &message, message.count) == 0 else { return "" }
        return String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test("A missing library gives the dlopen message, naming the library")
    func missingLibrary() {
        let text = Self.failure(loading: "libglib-absent-for-test.so.0")
        #expect(text.hasPrefix("GLib is not available: dlopen(\"libglib-absent-for-test.so.0\") failed ("), "\(text)")
    }

    @Test("A library without GLib's functions gives the name of the first one missing")
    func libraryWithoutGLib() {
        let text = Self.failure(loading: "libc.so.6")
        #expect(text.hasPrefix("libc.so.6 has no g_main_context_new ("), "\(text)")
    }
}
