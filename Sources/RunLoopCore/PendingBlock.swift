struct Source0Pick {
    let source: LoopSource
    let order: Int
    let stamp: UInt64
}

/// A block waiting for a matching mode (B1).
struct PendingBlock {
    enum Target {
        case one(Loop.Mode), several([Loop.Mode])

        /// `.one` for a single mode.
        init(modes: [Loop.Mode]) { self = modes.count == 1 ? .one(modes[0]) : .several(modes) }

        /// The modes named.
        var modes: [Loop.Mode] {
            switch self {
            case .one(let mode): return [mode]
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

    /// B2: the block's mode is the current mode, or `.common` and the current mode is common.
    func matches(_ mode: Loop.Mode, isCommon: Bool) -> Bool {
        targets(mode) || (isCommon && targetsCommon)
    }

    /// Whether the block names `mode` itself.
    @inline(__always)
    func targets(_ mode: Loop.Mode) -> Bool {
        switch target {
        case .one(let m): return m == mode
        case .several(let ms): return ms.contains(mode)
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
        case .one(let m): return m == .common
        case .several(let ms): return ms.contains(.common)
        }
    }
}

struct AsyncWork {
    let label: String
    let work: @Sendable () -> Void
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
