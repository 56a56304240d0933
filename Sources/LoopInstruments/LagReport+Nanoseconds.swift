import RunLoopCore

extension LagReport {
    /// The awake span in nanoseconds, for the exporters' integer arithmetic.
    var spanNanoseconds: UInt64 { detectedAt.nanoseconds &- turnStart.nanoseconds }
}
