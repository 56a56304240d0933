// Timing in pairs: a baseline chunk and a measured chunk a few milliseconds apart, round after
// round, in an order that alternates. The host slows this VM's vCPU for seconds at a time, so
// only chunks taken milliseconds apart compare; the median of many per-round ratios cancels that
// drift (Benchmarks/NOTES.md, "Loops on two CPUs"). The rounds of each order are summarised
// apart and the worse order's median is the reading: a work that gains from running second
// (warm caches, a heap its partner left behind) cannot hide behind the other order.

import RunLoopCore

/// Nanoseconds on the loop's monotonic clock, for the tools' chunk timings.
public func monotonicNanoseconds() -> UInt64 { MonotonicClock.shared.now.nanoseconds }

/// The chunks of a paired measurement, round by round: each chunk's time per unit, and each
/// round's measured chunk divided by its baseline chunk.
public struct PairedChunks {
    public private(set) var baseline: [Double] = []
    public private(set) var measured: [Double] = []
    public private(set) var ratios: [Double] = []
    /// The ratios of the rounds that timed the measured chunk first, and of those that timed
    /// the baseline first.
    public private(set) var measuredFirstRatios: [Double] = []
    public private(set) var baselineFirstRatios: [Double] = []

    /// Runs `rounds` rounds of one `baseline` and one `measured` chunk (each returns its time
    /// per unit), the baseline first in even rounds and second in odd ones.
    public init(rounds: Int, baseline runBaseline: () -> Double, measured runMeasured: () -> Double) {
        for round in 0..<rounds {
            let baselineTime: Double, measuredTime: Double
            if PairedChunks.baselineFirst(inRound: round) {
                baselineTime = runBaseline()
                measuredTime = runMeasured()
            } else {
                measuredTime = runMeasured()
                baselineTime = runBaseline()
            }
            append(baseline: baselineTime, measured: measuredTime)
        }
    }

    /// No rounds yet: for a tool whose chunks are async, which runs its own rounds in the order
    /// `baselineFirst(inRound:)` gives and `append`s each.
    public init() {}

    /// Whether round `round` times its baseline chunk first (even rounds) or second.
    public static func baselineFirst(inRound round: Int) -> Bool { round % 2 == 0 }

    /// Records the next round's chunk times (per unit), timed in the order
    /// `baselineFirst(inRound:)` gives for that round.
    public mutating func append(baseline baselineTime: Double, measured measuredTime: Double) {
        let ratio = measuredTime / baselineTime
        if PairedChunks.baselineFirst(inRound: ratios.count) {
            baselineFirstRatios.append(ratio)
        } else {
            measuredFirstRatios.append(ratio)
        }
        baseline.append(baselineTime)
        measured.append(measuredTime)
        ratios.append(ratio)
    }

    /// The ratios of the order whose median is higher (the worse one for the measured side).
    public var worseOrderRatios: [Double] {
        guard !measuredFirstRatios.isEmpty else { return baselineFirstRatios }
        guard !baselineFirstRatios.isEmpty else { return measuredFirstRatios }
        return quantile(measuredFirstRatios, 0.5) >= quantile(baselineFirstRatios, 0.5)
            ? measuredFirstRatios : baselineFirstRatios
    }

    /// The table cells "baseline median | measured median | measured first | baseline first |
    /// worse order's median | its 25th–75th percentile" (`PairedChunks.headerCells`).
    public var tableCells: String {
        let worse = worseOrderRatios
        return "\(nanosecondsText(quantile(baseline, 0.5))) | \(nanosecondsText(quantile(measured, 0.5))) | "
            + "\(ratioText(quantile(measuredFirstRatios, 0.5))) | \(ratioText(quantile(baselineFirstRatios, 0.5))) | "
            + "\(ratioText(quantile(worse, 0.5))) | \(ratioText(quantile(worse, 0.25)))–\(ratioText(quantile(worse, 0.75)))"
    }

    /// The header cells and separator of the columns `tableCells` fills, after the first
    /// column's `title`: `baseline` and `measured` name the two sides.
    public static func header(_ title: String, baseline: String, measured: String) -> String {
        "| \(title) | \(baseline), ns (median) | \(measured), ns (median) | \(measured) first, median | "
            + "\(baseline) first, median | paired ratio, worse order's median | 25th–75th percentile (that order) |\n"
            + "|---|---:|---:|---:|---:|---:|---:|"
    }
}
