// What the allocation counter costs the polling pass and the autorelease works, timed in pairs
// within one process (issue 16, item 5). `Scripts/run-allocation-overhead.sh` runs it under
// `taskset -c 0`.
//
//   allocation-overhead [rounds] [chunk-milliseconds] [work]
//
// Defaults: 200 rounds, 3 ms chunks, every work; `work` keeps only the works whose name
// contains it (e.g. "fresh").
//
// Each work is calibrated so a chunk with the counter off takes about the chunk time, warmed
// up, then run for `rounds` rounds (PairedTiming.swift). Prints one markdown table: the median
// ns per operation with the counter off, and per mode the median of the rounds' ratios to "off"
// with the 25th–75th percentiles. Exits 1 when a work or the counter's figures are wrong.

import BenchPasses
import CAllocationCounter
import LoopAllocationCounter

/// `value` with `digits` decimals (no Foundation here).
func fixed(_ value: Double, _ digits: Int) -> String {
    var scale = 1
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((value * Double(scale)).rounded())
    let fraction = String(scaled % scale)
    return digits == 0 ? String(scaled) : "\(scaled / scale)." + String(repeating: "0", count: digits - fraction.count) + fraction
}

func ratioCell(_ ratios: [Double]) -> String {
    "\(fixed(quantile(ratios, 0.5), 3))× (\(fixed(quantile(ratios, 0.25), 3))–\(fixed(quantile(ratios, 0.75), 3)))"
}

/// Measures every work and returns the markdown table.
func measureWorks(rounds: Int, chunkMilliseconds: Double, only filter: String?) -> String {
    // The counter's default interval, read before anything sets one.
    let sampleInterval = rlk_alloc_get_sample_interval()
    // Each work is made just before it is measured and dropped after, so a work's objects are
    // gone before the next begins. The fresh-object works run before the handed-over object's,
    // whose hundreds of thousands of objects scatter the heap's free blocks: run after it, the
    // 1,000 fresh objects read 39 ns instead of 35 with the counter off, and counting 0.95x of
    // off (the counting free's early load of the block header hid cache misses glibc's free took).
    let makers = [pollingPassWork, borrowedObjectWork, freshObjectPerPoolWork, thousandFreshObjectsWork,
                  handedOverObjectWork, emptyPushPopWork, sameObjectWork]
    var rows: [String] = []
    for makeWork in makers {
        let work = makeWork()
        if let filter, !work.name.contains(filter) { continue }
        let operations = calibratedOperations(work, chunkNanoseconds: chunkMilliseconds * 1_000_000)
        let run = pairedRun(work, operations: operations, rounds: rounds,
                            warmUpRounds: max(5, rounds / 20), sampleInterval: sampleInterval)
        let samples = run.samples, samplesTaken = run.samplesTaken
        if work.userAllocationsPerOperation > 0 && samplesTaken == 0 { fail("\(work.name): sampling mode took no sample") }
        if !work.allocatesAnything && samplesTaken != 0 {
            fail("\(work.name): sampling mode took \(samplesTaken) samples in a work that allocates nothing")
        }
        let offNanoseconds = quantile(samples.nanosecondsPerUnit[.off]!, 0.5)
        let keptRounds = samples.nanosecondsPerUnit[.off]!.count
        rows.append("| \(work.name) | \(operations) | \(keptRounds) of \(run.roundsRun) | \(fixed(offNanoseconds, 1)) | \(ratioCell(samples.ratios(.offAgain))) | "
                    + "\(ratioCell(samples.ratios(.counting))) | \(ratioCell(samples.ratios(.sampling))) |")
    }
    if rows.isEmpty { fail("no work's name contains \"\(filter ?? "")\"") }
    return """
        | work | operations per ~\(chunkMilliseconds) ms chunk | rounds kept (no context switch) \
        | off: ns per op (median) | off again ÷ off | counting ÷ off | sampling every \(sampleInterval) B ÷ off |
        |---|---:|---:|---:|---:|---:|---:|
        \(rows.joined(separator: "\n"))
        """
}

let arguments = Array(CommandLine.arguments.dropFirst())
let rounds = arguments.count > 0 ? Int(arguments[0]) ?? 0 : 200
let chunkMilliseconds = arguments.count > 1 ? Double(arguments[1]) ?? 0 : 3
let workFilter = arguments.count > 2 ? arguments[2] : nil
if rounds <= 0 || chunkMilliseconds <= 0 || arguments.count > 3 {
    fail("usage: allocation-overhead [rounds > 0] [chunk-milliseconds > 0] [work]")
}
if !AllocationCounter.isInterposing { fail("this build does not interpose the allocator (a sanitizer owns malloc?)") }
runOnOwnThread { print(measureWorks(rounds: rounds, chunkMilliseconds: chunkMilliseconds, only: workFilter)) }
