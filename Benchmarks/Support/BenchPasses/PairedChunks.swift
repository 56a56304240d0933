// Timing in pairs: a baseline chunk and a measured chunk a few milliseconds apart, round after
// round, in an order that alternates. The host slows this VM's vCPU for seconds at a time, so
// only chunks taken milliseconds apart compare; the median of many per-round ratios cancels that
// drift (Benchmarks/NOTES.md, "Loops on two CPUs").

import RunLoopCore

/// Nanoseconds on the loop's monotonic clock, for the tools' chunk timings.
public func monotonicNanoseconds() -> UInt64 { MonotonicClock.shared.now.nanoseconds }

/// The chunks of a paired measurement, round by round: each chunk's time per unit, and each
/// round's measured chunk divided by its baseline chunk.
public struct PairedChunks {
    public private(set) var baseline: [Double] = []
    public private(set) var measured: [Double] = []
    public private(set) var ratios: [Double] = []

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

    /// Records one round's chunk times (per unit).
    public mutating func append(baseline baselineTime: Double, measured measuredTime: Double) {
        baseline.append(baselineTime)
        measured.append(measuredTime)
        ratios.append(measuredTime / baselineTime)
    }

    /// The table cells "baseline median | measured median | ratio median | 25th–75th percentile".
    public var tableCells: String {
        "\(nanosecondsText(quantile(baseline, 0.5))) | \(nanosecondsText(quantile(measured, 0.5))) | "
            + "\(ratioText(quantile(ratios, 0.5))) | \(ratioText(quantile(ratios, 0.25)))–\(ratioText(quantile(ratios, 0.75)))"
    }
}
