import LoopTime

/// A file descriptor the loop owns or watches. Where there may be none, the type is
/// `Descriptor?` (CF's `MACH_PORT_NULL`), never a -1 sentinel.
struct Descriptor: Equatable {
    let raw: Int32

    /// `raw` when it is a descriptor (≥ 0), else nil (a failed `open`-style call's -1).
    @inline(__always)
    init?(_ raw: Int32) {
        guard raw >= 0 else { return nil }
        self.raw = raw
    }
}

/// When a wait must end: at once (a polling pass), at an instant on the loop's clock, or only
/// when something wakes it.
enum WaitDeadline: Equatable {
    case poll
    case at(LoopInstant)
    case never

    /// L2: a run's timeout as the deadline of its waits. ≤ 0 polls; beyond CF's interval limit
    /// (about 16 years) never ends (X5: no timer is armed for it, the waiter computes its own
    /// timeout); otherwise the loop's clock now plus the timeout.
    @inline(__always)
    init(timeout: RunTimeout, on loop: Loop) {
        switch timeout.nanoseconds {
        case 0: self = .poll
        case .max: self = .never
        case let span: self = .at(LoopInstant(nanoseconds: Nanoseconds.add(loop.clockNanoseconds(), span)))
        }
    }

    /// The earlier of this deadline and a mode's timer deadline (`.max`: no timer).
    @inline(__always)
    func earlier(thanTimer timer: UInt64) -> UInt64 {
        switch self {
        case .poll: return 0
        case .at(let instant): return min(instant.nanoseconds, timer)
        case .never: return timer
        }
    }

    /// Whether the loop's clock has reached the deadline (L-e's "timed out"). `.never` never
    /// does and reads no clock (a clock read is 20–45 ns through the vDSO, once per pass).
    @inline(__always)
    func isReached(on loop: Loop) -> Bool {
        switch self {
        case .poll: return true
        case .at(let instant): return instant.nanoseconds <= loop.clockNanoseconds()
        case .never: return false
        }
    }
}

/// One run of the loop as its passes see it: its mode, its frame, and `__CFRunLoopRun`'s
/// arguments and the values it settles before its first pass (L1, L2) in the frame's storage.
///
/// Three words, passed to every step of a pass: the run's settings live in the frame (the loop
/// thread's scratch storage), not in this value, so a call does not copy them. The frame is
/// reached through its handle (pointers into storage the frame keeps), which the loop keeps
/// alive as long as the frame: for its lifetime (frames are reused, one per nesting depth), so
/// a run does no reference counting of its frame.
struct RunContext {
    let mode: ModeState
    let frame: RunFrameHandle

    init(mode: ModeState, frame: RunFrameHandle, timeout: RunTimeout, returnAfterSourceHandled: Bool) {
        self.mode = mode
        self.frame = frame
        frame.scratch.pointee.settings = RunSettings(timeout: timeout, returnAfterSourceHandled: returnAfterSourceHandled)
    }

    /// The run's settings, in its frame (loop thread only). A pointer, not a property that
    /// yields them: a debug build would allocate a coroutine frame for each access.
    var settings: UnsafeMutablePointer<RunSettings> {
        @inline(__always) get { frame.scratch.pointer(to: \.settings).unsafelyUnwrapped }
    }

    /// The run returns after one handled source (CF's `stopAfterHandle`, "rash").
    var returnAfterSourceHandled: Bool { @inline(__always) get { settings.pointee.returnAfterSourceHandled } }
    /// L1: the async queue's descriptor when this run services the queue.
    var asyncPort: Descriptor? { @inline(__always) get { settings.pointee.asyncPort } }
    /// L2.
    var deadline: WaitDeadline { @inline(__always) get { settings.pointee.deadline } }
    /// The run's serial (`RunControl.serial`), which the wait compares with a wake-up's.
    var serial: UInt64 { @inline(__always) get { settings.pointee.serial } }
}

/// What a run was asked to do and what it settled before its first pass.
struct RunSettings {
    /// As given to `run`.
    var timeout = RunTimeout.poll
    var returnAfterSourceHandled = false
    /// L1.
    var asyncPort: Descriptor?
    /// L2: set from `timeout` when the passes begin.
    var deadline = WaitDeadline.poll
    /// The loop thread's copy of `RunControl.serial`: it sets the serial at the run's start
    /// and nothing else changes it, so the wait reads it without the lock.
    var serial: UInt64 = 0
}

/// What ended a wait (CF's `livePort`): one cause per pass (L-c).
enum LivePort {
    case none
    case wake
    case timer
    case async
    case source(token: UInt64, ready: UInt32)
    /// Several fd sources are ready: the frame's `readyFiles` lists them (handled in one pass).
    case files
    /// The wait set failed (not EINTR): the mode cannot wait any more (see `ModeGuardedState.waitFailed`).
    case failed
}

/// A value computed with the loop's lock held, returned with the lock still held: the caller
/// goes on under it (the lock is not released and taken again in between).
struct UnderLock<Value>: ~Copyable {
    let held: LoopLock.Held
    let value: Value
}
