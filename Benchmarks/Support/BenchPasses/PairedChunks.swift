// Timing in pairs: a baseline chunk and a measured chunk a few milliseconds apart, over and
// over. The host slows this VM's vCPU for seconds at a time, so only chunks taken milliseconds
// apart compare; the median of many per-pair ratios cancels that drift (Benchmarks/NOTES.md,
// "Loops on two CPUs"). The chunks alternate strictly, baseline, measured, baseline, …,
// baseline, so every chunk follows one of the other side's: each measured chunk pairs with the
// baseline chunk before it (baseline first) and the one after it (measured first). The two
// orders are summarised apart and the worse order's median is the reading: a work that gains
// from running second (warm caches, a heap its partner left behind) cannot hide behind the other
// order. (An earlier schedule swapped the order every other round, A B, B A, …: both chunks of a
// round then follow the same side, and with two servers that made the orders differ by 0.4×;
// NOTES.md, "CPU per request with many registered, timed in pairs".)

import RunLoopCore

/// Nanoseconds on the loop's monotonic clock, for the tools' chunk timings.
public func monotonicNanoseconds() -> UInt64 { MonotonicClock.shared.now.nanoseconds }

/// The chunks of a paired measurement: each chunk's time per unit, and each measured chunk
/// divided by the baseline chunk before it and by the one after it.
public struct PairedChunks {
    public private(set) var baseline: [Double] = []
    public private(set) var measured: [Double] = []
    /// Each measured chunk over the baseline chunk after it, and over the one before it.
    public private(set) var measuredFirstRatios: [Double] = []
    public private(set) var baselineFirstRatios: [Double] = []

    /// Times `rounds` measured chunks between `rounds + 1` baseline chunks, alternating (each
    /// closure returns its chunk's time per unit).
    public init(rounds: Int, baseline runBaseline: () -> Double, measured runMeasured: () -> Double) {
        append(baseline: runBaseline())
        for _ in 0..<rounds {
            append(measured: runMeasured())
            append(baseline: runBaseline())
        }
    }

    /// No chunks yet: for a tool whose chunks are async, which times them itself, alternating,
    /// a baseline chunk first and last, and `append`s each as it is timed.
    public init() {}

    /// Records the next baseline chunk's time per unit; it pairs with the measured chunk before it.
    public mutating func append(baseline time: Double) {
        if let last = measured.last, baseline.count == measured.count { measuredFirstRatios.append(last / time) }
        baseline.append(time)
    }

    /// Records the next measured chunk's time per unit; it pairs with the baseline chunk before it.
    public mutating func append(measured time: Double) {
        precondition(baseline.count == measured.count + 1, "PairedChunks: a measured chunk must follow a baseline chunk")
        baselineFirstRatios.append(time / baseline[baseline.count - 1])
        measured.append(time)
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

    /// How a table's title states the schedule of `init(rounds:baseline:measured:)`: `rounds`
    /// measured chunks of `size` between `rounds + 1` baseline chunks.
    public static func schedule(rounds: Int, chunksOf size: String) -> String {
        "\(rounds + 1) + \(rounds) alternating chunks of \(size)"
    }

    /// The header cells and separator of the columns `tableCells` fills, after the first
    /// column's `title`: `baseline` and `measured` name the two sides.
    public static func header(_ title: String, baseline: String, measured: String) -> String {
        "| \(title) | \(baseline), ns (median) | \(measured), ns (median) | \(measured) first, median | "
            + "\(baseline) first, median | paired ratio, worse order's median | 25th–75th percentile (that order) |\n"
            + "|---|---:|---:|---:|---:|---:|---:|"
    }
}
