import RunLoopKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a pass of a mode would do now without waiting, one line each: what both the harness's
/// `runUntilIdle` and a virtual-loop test's settling run passes for.
enum DueWork {
    /// Signalled sources0, port messages, ready fds, a due timer, queued blocks and jobs, and
    /// (in a common mode) submitted work; empty when the mode is idle.
    static func list(on loop: Loop, clock: VirtualClock, in mode: Loop.Mode) -> [String] {
        let inventory = loop.inventory
        let isCommon = loop.commonModes.contains(mode)
        var due: [String] = []
        if let items = inventory.modes.first(where: { $0.mode == mode }) {
            for source in items.sources0 where source.isSignalled {
                due.append("source0 '\(source.label)' is signalled")
            }
            for port in items.ports where port.pendingCount > 0 {
                due.append("port '\(port.label)' holds \(port.pendingCount) message(s)")
            }
            for source in items.fileSources {
                let ready = readiness(of: source)
                if !ready.isEmpty { due.append("fd source '\(source.label)' is ready \(ready)") }
            }
            // A timer with tolerance may be deferred up to its tolerance (T8).
            if let first = items.timers.first, first.nextFireDate.advanced(by: first.tolerance) <= clock.now {
                due.append("timer '\(first.label)' was due at \(first.nextFireDate)")
            }
        }
        for block in inventory.pendingBlocks where block.modes.contains(mode) || (isCommon && block.modes.contains(.common)) {
            due.append("block '\(block.label)' waits for \(mode)")
        }
        if isCommon {
            for label in inventory.pendingAsyncLabels { due.append("submitted work '\(label)' waits") }
        }
        return due
    }

    /// What `source`'s descriptor is ready for now (a zero-timeout `poll`); hang-up and error
    /// always count, as the loop reports them.
    static func readiness(of source: LoopFileSource) -> LoopFileSource.Events {
        let interest = source.interest
        var request = pollfd(fd: source.fd, events: 0, revents: 0)
        if interest.contains(.readable) { request.events |= Int16(POLLIN) }
        if interest.contains(.writable) { request.events |= Int16(POLLOUT) }
        // POLLRDHUP (Linux, 0x2000; Glibc's module leaves it out): the peer's end of sending.
        let readHangUp: Int16 = 0x2000
        if interest.contains(.readClosed) { request.events |= readHangUp }
        guard case .success(let count) = valueOrErrno("poll", { poll(&request, 1, 0) }), count > 0 else { return [] }
        var ready: LoopFileSource.Events = []
        if request.revents & Int16(POLLIN) != 0 { ready.insert(.readable) }
        if request.revents & Int16(POLLOUT) != 0 { ready.insert(.writable) }
        if request.revents & Int16(POLLHUP) != 0 { ready.insert(.hangUp) }
        if request.revents & Int16(POLLERR) != 0 { ready.insert(.error) }
        if request.revents & readHangUp != 0 { ready.insert(.readClosed) }
        return ready
    }
}
