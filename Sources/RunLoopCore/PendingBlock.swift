struct Source0Pick {
    let source: LoopSource
    let order: Int
    let stamp: UInt64
}

/// A block waiting for a matching mode (B1).
struct PendingBlock {
    /// The modes whose passes run the block.
    enum Target {
        /// One mode of the loop, by its state: matched by identity, and queued and dropped
        /// without a retain and release of its name. The loop never removes a mode (M1), so
        /// the state outlives every block of the loop's queue.
        case mode(Unmanaged<ModeState>)
        /// Every common mode (`.common`, B2).
        case common
        /// One mode by name: a mode that could not be created, or `jobModes` with one mode.
        case named(Loop.Mode)
        /// Several modes by name (`perform(inModes:)`, `jobModes`); `.common` may be one.
        case several([Loop.Mode])

        /// `.common`, `.named` or `.several` for the modes named.
        init(modes: [Loop.Mode]) {
            if modes.count != 1 {
                self = .several(modes)
            } else {
                self = modes[0].isCommonModes ? .common : .named(modes[0])
            }
        }

        /// The modes named. Loop lock held (a `.mode` target reads its state's name).
        var modes: [Loop.Mode] {
            switch self {
            case .mode(let state): return [state._withUnsafeGuaranteedRef { $0.mode }]
            case .common: return [.common]
            case .named(let mode): return [mode]
            case .several(let modes): return modes
            }
        }
    }
    /// A closure performed with `perform`, or a Swift Concurrency job enqueued on the loop as
    /// an executor (no closure allocated for it): as a serial executor (an actor's job) or as a
    /// task executor (a task that prefers the loop, running nonisolated code).
    enum Work {
        case closure(@Sendable () -> Void)
        case job(UnownedJob)
        case taskJob(UnownedJob)
        /// Taken by its callout (`takeWork`): the block has run and waits to be dropped.
        case taken
    }
    let target: Target
    let label: String
    private(set) var work: Work

    init(target: Target, label: String, work: @escaping @Sendable () -> Void) {
        self.target = target
        self.label = label
        self.work = .closure(work)
    }

    init(target: Target, label: String, job: UnownedJob, asTaskExecutor: Bool) {
        self.target = target
        self.label = label
        self.work = asTaskExecutor ? .taskJob(job) : .job(job)
    }

    /// B2: the block targets `state` (whose name is `name`) itself, or `.common` while `state`
    /// is common. The state is lent (`Unmanaged`) and its name passed beside it: a strong
    /// reference captured by a search's closure was a retain and a release of it.
    func matches(_ state: Unmanaged<ModeState>, _ name: Loop.Mode, isCommon: Bool) -> Bool {
        targets(state, name) || (isCommon && targetsCommon)
    }

    /// B2 for a mode known by name only (it may not exist): the block names `mode` itself, or
    /// `.common` while `mode` is common. Loop lock held.
    func matches(named mode: Loop.Mode, isCommon: Bool) -> Bool {
        switch target {
        case .mode(let state): return state._withUnsafeGuaranteedRef { $0.mode == mode }
        case .common: return isCommon
        case .named(let own): return own == mode
        case .several(let modes): return modes.contains(mode) || (isCommon && modes.contains(.common))
        }
    }

    /// Whether the block names `state`, whose name is `name`, itself.
    @inline(__always)
    func targets(_ state: Unmanaged<ModeState>, _ name: Loop.Mode) -> Bool {
        switch target {
        case .mode(let own): return own.toOpaque() == state.toOpaque()
        case .common: return false
        case .named(let mode): return mode == name
        case .several(let modes): return modes.contains(name)
        }
    }

    /// Whether this is a Swift Concurrency job.
    var job: UnownedJob? {
        switch work {
        case .job(let job), .taskJob(let job): return job
        case .closure, .taken: return nil
        }
    }

    /// Moves the work out for its callout, leaving `.taken`. Calling the work from a copy
    /// retained and released its closure twice (an atomic operation each) for every block;
    /// a value moved out of the queue's storage needs neither.
    @inline(__always)
    mutating func takeWork() -> Work {
        var taken = Work.taken
        swap(&work, &taken)
        return taken
    }

    /// Whether the block names the common-modes pseudo-mode.
    @inline(__always)
    var targetsCommon: Bool {
        switch target {
        case .common: return true
        case .mode, .named: return false
        case .several(let modes): return modes.contains(.common)
        }
    }
}

/// Work from `submit`, queued until a pass drains the async queue (X4).
struct AsyncWork {
    let label: String
    private(set) var work: @Sendable () -> Void

    init(label: String, work: @escaping @Sendable () -> Void) {
        self.label = label
        self.work = work
    }

    /// Moves the work out for its callout, leaving a closure that does nothing: as with a
    /// block's (`PendingBlock.takeWork`), a copy would retain and release the closure.
    @inline(__always)
    mutating func takeWork() -> @Sendable () -> Void {
        var taken: @Sendable () -> Void = AsyncWork.taken
        swap(&work, &taken)
        return taken
    }

    /// What a drained item holds until the queue drops it; a function, so it has no context
    /// to retain.
    private static func taken() {}
}

extension Array {
    /// Drops the elements from `count` on, keeping the capacity. For the short scratch
    /// buffers of a pass this is much cheaper than `removeAll(keepingCapacity:)`, which goes
    /// through the generic `replaceSubrange`.
    @inline(__always)
    mutating func truncate(to count: Int) {
        while self.count > count { removeLast() }
    }
}
