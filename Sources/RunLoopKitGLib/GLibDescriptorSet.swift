import CGLibRuntime
import RunLoopCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// GLib's descriptors, as its last query listed them, in an epoll set of their own. The loop
/// watches that one descriptor, which is readable while any of GLib's is ready (as libuv's
/// backend descriptor is for its loop).
///
/// epoll registers an open file, not a number: when GLib closes a descriptor and a new one gets
/// the same number between two queries, the old registration has left the set (or stays, while
/// the old file is open elsewhere) and the new file was never added. So every sync restates each
/// descriptor it keeps (`EPOLL_CTL_MOD` fails with ENOENT when the number now names another file),
/// and the set is rebuilt from scratch when that happens or a removal fails.
struct GLibDescriptorSet: ~Copyable {
    /// One descriptor of GLib's set.
    private struct Entry {
        var fd: Int32
        /// GIOCondition bits GLib asked for.
        var events: UInt16
        /// In the epoll set; false for a descriptor epoll refuses.
        var registered: Bool
    }

    /// The epoll descriptor the loop watches.
    let epollFD: Int32
    private var entries: [Entry] = []
    /// The previous sync's array, kept for its capacity: a sync allocates nothing.
    private var spare: [Entry] = []

    /// A listed descriptor epoll cannot watch: a regular file (always ready for poll(2)) or a
    /// closed number (poll(2) reports POLLNVAL). GLib would not sleep then, and neither may
    /// the loop.
    var hasUnwatchable: Bool { entries.contains { !$0.registered } }

    /// An empty set.
    init() throws(SystemCallError) {
        epollFD = try valueOrErrno("epoll_create1") { rlk_glib_epoll_create() }.get()
    }

    deinit { closeDescriptor(epollFD, "a GLib context's descriptor set") }

    /// What a sync found.
    enum SyncOutcome {
        /// The set now holds GLib's descriptors.
        case current
        /// A number changed files, or a removal failed: build a new set.
        case needsRebuild
    }

    /// Makes the set hold exactly `records` (sorted by descriptor, as `g_main_context_query`
    /// returns them).
    ///
    /// - Throws: an `epoll_ctl` failure other than the expected ones (ENOMEM, ENOSPC); the set
    ///   should then be rebuilt.
    mutating func sync(_ records: UnsafeBufferPointer<rlk_GPollFD>) throws(SystemCallError) -> SyncOutcome {
        var outcome = SyncOutcome.current
        var kept = 0
        var index = 0
        var next = spare
        spare = []
        next.removeAll(keepingCapacity: true)
        while kept < entries.count || index < records.count {
            if index == records.count || (kept < entries.count && entries[kept].fd < records[index].fd) {
                // Left GLib's set. A failed removal may leave a registration of the old file.
                let gone = entries[kept]
                kept += 1
                if gone.registered,
                   case .failure = valueOrErrno("epoll_ctl(DEL)", { rlk_glib_epoll_control(epollFD, RLK_GLIB_EPOLL_REMOVE, gone.fd, 0) }) {
                    outcome = .needsRebuild
                }
            } else if kept == entries.count || records[index].fd < entries[kept].fd {
                next.append(try entry(adding: records[index]))
                index += 1
            } else {
                // Kept: restating it proves the number still names the registered file.
                let record = records[index]
                let old = entries[kept]
                kept += 1
                index += 1
                if !old.registered {
                    next.append(try entry(adding: record))
                    continue
                }
                switch valueOrErrno("epoll_ctl(MOD)", { rlk_glib_epoll_control(epollFD, RLK_GLIB_EPOLL_MODIFY, record.fd, UInt32(record.events)) }) {
                case .success:
                    next.append(Entry(fd: record.fd, events: record.events, registered: true))
                case .failure(let failure) where failure.code == ENOENT || failure.code == EBADF || failure.code == EPERM:
                    next.append(Entry(fd: record.fd, events: record.events, registered: false))
                    outcome = .needsRebuild
                case .failure(let failure):
                    throw failure
                }
            }
        }
        spare = entries
        entries = next
        return outcome
    }

    /// Registers `record`; a descriptor epoll refuses (EPERM: a regular file; EBADF: closed)
    /// comes back unregistered.
    private func entry(adding record: rlk_GPollFD) throws(SystemCallError) -> Entry {
        let added = valueOrErrno("epoll_ctl(ADD)") {
            rlk_glib_epoll_control(epollFD, RLK_GLIB_EPOLL_ADD, record.fd, UInt32(record.events))
        }
        switch added {
        case .success:
            return Entry(fd: record.fd, events: record.events, registered: true)
        case .failure(let failure) where failure.code == EEXIST:
            // Registered already (a removal that failed earlier): restate it.
            _ = try valueOrErrno("epoll_ctl(MOD)") {
                rlk_glib_epoll_control(epollFD, RLK_GLIB_EPOLL_MODIFY, record.fd, UInt32(record.events))
            }.get()
            return Entry(fd: record.fd, events: record.events, registered: true)
        case .failure(let failure) where failure.code == EPERM || failure.code == EBADF:
            return Entry(fd: record.fd, events: record.events, registered: false)
        case .failure(let failure):
            throw failure
        }
    }
}
