import CGLibRuntime
import RunLoopCore
import RunLoopDiagnostics
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The four calls of one GLib iteration on a context the calling thread has acquired —
/// prepare, query, check, dispatch — with the poll in between done without waiting (the loop did
/// the waiting). Keeps the descriptor records of the last query, which check must be given back.
struct GLibIteration {
    let glib: UnsafePointer<rlk_glib>
    let context: OpaquePointer
    /// The records of the last query; only the first `count` are current.
    private(set) var records: [rlk_GPollFD] = Array(repeating: rlk_GPollFD(), count: 8)
    private(set) var count = 0

    init(glib: UnsafePointer<rlk_glib>, context: OpaquePointer) {
        self.glib = glib
        self.context = context
    }

    /// `g_main_context_prepare`: whether a source is ready now, and the highest priority to
    /// check.
    func prepare() -> (ready: Bool, priority: Int32) {
        var priority: Int32 = 0
        let ready = glib.pointee.g_main_context_prepare(context, &priority) != 0
        return (ready, priority)
    }

    /// `g_main_context_query` for `priority`: fills ``records`` and returns GLib's timeout in
    /// milliseconds (-1: none, 0: do not wait).
    mutating func query(priority: Int32) -> Int32 {
        var timeout: Int32 = -1
        while true {
            let capacity = Int32(records.count)
            let needed = records.withUnsafeMutableBufferPointer { buffer in
                glib.pointee.g_main_context_query(context, priority, &timeout, buffer.baseAddress, capacity)
            }
            if needed <= capacity {
                count = Int(max(needed, 0))
                return timeout
            }
            // More records than room: grow and ask again (GLib fills nothing past the room).
            records = Array(repeating: rlk_GPollFD(), count: Int(needed))
        }
    }

    /// The current records.
    func withRecords<Result, Failure: Error>(
        _ body: (UnsafeBufferPointer<rlk_GPollFD>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try records.withUnsafeBufferPointer { all throws(Failure) in try body(UnsafeBufferPointer(rebasing: all[..<count])) }
    }

    /// `g_main_context_check` with the records as the last poll left them: whether a source is
    /// ready to dispatch.
    mutating func check(priority: Int32) -> Bool {
        let count = Int32(self.count)
        return records.withUnsafeMutableBufferPointer { buffer in
            glib.pointee.g_main_context_check(context, priority, buffer.baseAddress, count)
        } != 0
    }

    /// `g_main_context_dispatch`. GLib's callbacks may run a nested loop run, which queries
    /// again and so rewrites the records.
    func dispatch() {
        glib.pointee.g_main_context_dispatch(context)
    }

    /// Fills each record's `revents` with what is ready now (`poll` with a zero timeout) and
    /// returns whether anything is.
    @discardableResult
    mutating func pollWithoutWaiting() -> Bool {
        guard count > 0 else { return false }
        let count = self.count
        let polled = records.withUnsafeMutableBufferPointer { buffer in
            // GPollFD on Unix is struct pollfd (int fd; short events; short revents).
            buffer.baseAddress!.withMemoryRebound(to: pollfd.self, capacity: count) { fds in
                valueOrErrno("poll") { poll(fds, nfds_t(count), 0) }
            }
        }
        if case .failure(let failure) = polled {
            // Nothing counts as ready; GLib's timeouts and sources that are ready without a
            // descriptor still dispatch, and the next iteration polls again.
            Diagnostics.report(.error, .glibSystemCallFailed, "polling GLib's descriptors: \(failure)")
            for index in 0..<count { records[index].revents = 0 }
            return false
        }
        return (try? polled.get()) ?? 0 > 0
    }
}
