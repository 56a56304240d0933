import RunLoopCore

/// The memory one callout (or layout, display, measured span) allocated and freed.
public struct CalloutAllocation: Sendable, Equatable {
    public let kind: AllocationScopeKind
    public let label: String
    /// The turn it ran in (1-based, as ``TurnAllocation/number``); 0 outside any turn.
    public let turn: Int
    /// Nesting depth: 0 for a callout run directly by the loop, 1 for a layout inside it…
    public let depth: Int
    /// The loop clock's time at the start and the end.
    public let start: LoopInstant
    public let end: LoopInstant
    /// The thread's user live bytes when it ended (a running total since counting began, for
    /// the live-bytes counter track).
    public let liveBytesAtEnd: Int64
    /// What the program allocated and freed (pool pages and the instruments excluded).
    public let user: AllocationFigures
    /// The autorelease pool's own pages.
    public let poolPages: AllocationFigures
    /// Sampled bytes (sampling mode): samples taken times the interval.
    public let sampledBytes: UInt64

    /// The site this record counts under in generations and peak snapshots.
    public var site: AllocationSite { AllocationSite(kind: kind.description, label: label) }
}

/// The memory of one turn: from the wake (or the start of a top-level run) to the next sleep
/// (or the end of that run), as `TraceTurn.split` cuts turns.
public struct TurnAllocation: Sendable, Equatable {
    /// 1-based, counted by this attributor.
    public let number: Int
    /// The loop passes the turn covered.
    public let passes: ClosedRange<UInt64>
    public let start: LoopInstant
    public let end: LoopInstant
    /// The thread's user live bytes when the turn ended (a running total).
    public let liveBytesAtEnd: Int64
    /// Everything the turn allocated and freed, inside callouts or not.
    public let user: AllocationFigures
    public let poolPages: AllocationFigures
    public let sampledBytes: UInt64
    /// What the turn allocated and freed outside its callouts, i.e. the loop's own work
    /// (`user` minus the turn's top-level callouts; the peak is left 0, it does not subtract).
    public let outsideCallouts: AllocationFigures
    /// The indices of the turn's callouts in ``AllocationAttributor/callouts``.
    public let callouts: Range<Int>
    /// Generations mode: at the turn's peak, the sites holding the most live bytes (largest
    /// first). Empty in the other modes or when the turn never rose above its start.
    public let peakSnapshot: [SiteLiveBytes]
}

/// Live bytes held by one site.
public struct SiteLiveBytes: Sendable, Equatable {
    public let site: AllocationSite
    public let bytes: Int64
    /// Live blocks (0 where only bytes are known, as in peak snapshots).
    public let blocks: UInt64
}
