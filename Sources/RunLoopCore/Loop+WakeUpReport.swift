import CRunLoopShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Loop {
    /// One line with every piece of state that decides whether a producer writes the wake-up
    /// descriptor and whether the loop sleeps: what a report of a lost wake-up must show. Any
    /// thread; takes the loop's lock.
    package func wakeUpStateDescription() -> String {
        let (fields, wakeFD) = lock.withLock { () -> (String, Int32) in
            let frame = guarded.frames[guarded.depth]
            let jobs = guarded.blocks.reduce(0) { $0 + ($1.job == nil ? 0 : 1) }
            let text = "sleeping=\(guarded.sleeping) depth=\(guarded.depth) run=\(frame.serial)"
                + " ignoreWakeUps=\(frame.ignoreWakeUps) wakePending=\(wakePending)"
                + " wakeNoted=\(wakeNoted.load(ordering: .relaxed)) wakeSerial=\(guarded.wakeSerial)"
                + " wakeUpLost=\(wakeUpLost.load(ordering: .relaxed))"
                + " writesInFlight=\(wakeWritesInFlight.load(ordering: .relaxed))"
                + " jobs=\(jobs) blocks=\(guarded.blocks.count - jobs)"
                + " hasBlocks=\(hasBlocks.load(ordering: .relaxed))"
                + " asyncPending=\(guarded.asyncPending.count)"
            return (text, guarded.wakeFD)
        }
        return fields + " wakeEventfdCount=\(Loop.eventfdCount(wakeFD).map(String.init) ?? "?")"
    }

    /// How many times the wake-up descriptor has been written (it is never read); nil when the
    /// kernel does not say.
    package var wakeUpWriteCount: UInt64? { Loop.eventfdCount(lock.withLock { guarded.wakeFD }) }

    /// The counter of an eventfd as the kernel shows it in /proc/self/fdinfo (the wake-up
    /// descriptor is never read, so it counts every write); nil when it cannot be read.
    static func eventfdCount(_ fd: Int32) -> UInt64? {
        guard fd >= 0, let file = fopen("/proc/self/fdinfo/\(fd)", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard text.hasPrefix("eventfd-count:") else { continue }
            let digits = text.dropFirst("eventfd-count:".count).filter { !$0.isWhitespace }
            return UInt64(digits, radix: 16) ?? UInt64(digits)
        }
        return nil
    }

    /// Writes the wake-up descriptor directly, as a debugger would: the watchdog of the
    /// lost-wake-up stress test rescues a stalled loop with it (after reporting the state).
    package func forceWakeUpWrite() {
        let fd = lock.withLock { guarded.wakeFD }
        if fd >= 0 { _ = rlk_eventfd_signal(fd) }
    }
}
