import CGLibRuntime
import LoopInstruments
import RunLoopCore
@testable import RunLoopKitGLib
#if canImport(Glibc)
import Glibc
#endif

/// GLib sources for the tests, made through the bridge's run-time table: a Swift closure as a
/// GSource callback (the closure returns whether the source stays), kept alive by the source
/// and released by GLib's destroy notify. ``destroyAll()`` destroys every source made, which
/// releases the closures (they often capture the fixture that owns the context).
final class GLibSources {
    let glib: UnsafePointer<rlk_glib>
    /// Every source made, with a reference of this object's.
    private var made: [OpaquePointer] = []

    init() throws {
        glib = try GLibLibrary.load()
    }

    /// A box GLib holds as the callback's data.
    private final class Callback {
        let body: () -> Bool
        init(_ body: @escaping () -> Bool) { self.body = body }
    }

    private static let trampoline: rlk_GSourceFunc = { data in
        Unmanaged<Callback>.fromOpaque(data!).takeUnretainedValue().body() ? 1 : 0
    }
    private static let descriptorTrampoline: rlk_GUnixFDSourceFunc = { _, _, data in
        Unmanaged<Callback>.fromOpaque(data!).takeUnretainedValue().body() ? 1 : 0
    }
    private static let release: rlk_GDestroyNotify = { data in
        Unmanaged<Callback>.fromOpaque(data!).release()
    }

    /// Attaches `source` with `body` as its callback to `context`; returns the source id.
    @discardableResult
    func attach(_ source: OpaquePointer, to context: GLibMainContext, name: String? = nil,
                _ body: @escaping () -> Bool) -> UInt32 {
        let data = Unmanaged.passRetained(Callback(body)).toOpaque()
        glib.pointee.g_source_set_callback(source, Self.trampoline, data, Self.release)
        if let name { glib.pointee.g_source_set_name(source, name) }
        let id = glib.pointee.g_source_attach(source, context.pointer)
        made.append(source)
        return id
    }

    /// `g_idle_add` on `context`.
    @discardableResult
    func idle(on context: GLibMainContext, _ body: @escaping () -> Bool) -> UInt32 {
        attach(glib.pointee.g_idle_source_new(), to: context, body)
    }

    /// `g_timeout_add` on `context`.
    @discardableResult
    func timeout(milliseconds: UInt32, on context: GLibMainContext, _ body: @escaping () -> Bool) -> UInt32 {
        attach(glib.pointee.g_timeout_source_new(milliseconds), to: context, body)
    }

    /// `g_unix_fd_add` for readability of `fd` on `context`. The source does not own `fd`.
    @discardableResult
    func readable(_ fd: Int32, on context: GLibMainContext, _ body: @escaping () -> Bool) -> OpaquePointer {
        let source = glib.pointee.g_unix_fd_source_new(fd, UInt32(RLK_G_IO_IN))
        let data = Unmanaged.passRetained(Callback(body)).toOpaque()
        // GLib calls an fd source's callback with (fd, condition, data), as C code casts it.
        glib.pointee.g_source_set_callback(source, unsafeBitCast(Self.descriptorTrampoline, to: rlk_GSourceFunc.self),
                                           data, Self.release)
        _ = glib.pointee.g_source_attach(source, context.pointer)
        made.append(source)
        return source
    }

    /// Destroys the source `id` of `context` (`g_source_remove` for a context of one's own).
    func removeSource(id: UInt32, from context: GLibMainContext) {
        guard let source = glib.pointee.g_main_context_find_source_by_id(context.pointer, id) else { return }
        glib.pointee.g_source_destroy(source)
    }

    /// Destroys `source` (it stays referenced until ``destroyAll()``).
    func destroy(_ source: OpaquePointer) {
        glib.pointee.g_source_destroy(source)
    }

    /// Destroys and lets go of every source made.
    func destroyAll() {
        for source in made {
            glib.pointee.g_source_destroy(source)
            glib.pointee.g_source_unref(source)
        }
        made.removeAll()
    }
}

/// A pipe whose ends the test closes.
struct Pipe {
    let read: Int32
    let write: Int32

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SystemCallError(call: "pipe", code: errno) }
        read = ends[0]
        write = ends[1]
    }

    func writeByte() {
        var byte: UInt8 = 1
        while Glibc.write(write, &byte, 1) < 0 && errno == EINTR {}
    }

    func readByte() {
        var byte: UInt8 = 0
        while Glibc.read(read, &byte, 1) < 0 && errno == EINTR {}
    }

    func close() {
        _ = Glibc.close(read)
        _ = Glibc.close(write)
    }
}

extension TraceRecorder {
    /// The trace as short tokens: activities by their short names, `<label` and `>label` for a
    /// callout's begin and end, `zz`/`wake` for a sleep, logs as `"text"`. Observers of the
    /// recorder itself are left out.
    func tokens(skippingLabels skipped: Set<String> = []) -> [String] {
        entries.compactMap { entry -> String? in
            switch entry.kind {
            case .activity(let activity): return activity.shortName
            case .calloutBegin: return skipped.contains(entry.label) || entry.label == TraceRecorder.activityObserverLabel ? nil : "<" + entry.label
            case .calloutEnd: return skipped.contains(entry.label) || entry.label == TraceRecorder.activityObserverLabel ? nil : ">" + entry.label
            case .sleep: return "zz"
            case .wake: return "wake"
            case .log: return "\"" + entry.label + "\""
            default: return nil
            }
        }
    }
}
