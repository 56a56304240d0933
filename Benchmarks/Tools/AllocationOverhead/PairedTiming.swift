// Paired timing: each round runs one chunk of a work in every mode, a few milliseconds each and
// in a rotated order, and divides each mode's chunk by the round's "off" chunk. The host slows
// this VM's vCPU for seconds at a time, so only chunks taken milliseconds apart compare; the
// median of many such ratios cancels that drift. Every block of four rounds runs the four
// rotations in a random order: each mode still runs in every slot once per block, but no mode's
// chunks recur at a fixed period that a periodic disturbance could keep in step with.

import BenchPasses
import Glibc
import LoopAllocationCounter

/// The modes a round runs. `offAgain` is a second "off" chunk: its ratio to "off" is the
/// method's own spread, what a ratio of 1.00 looks like.
enum MeasuredMode: CaseIterable {
    case off, offAgain, counting, sampling

    func install(sampleInterval: UInt64) {
        switch self {
        case .off, .offAgain: AllocationCounter.mode = .off
        case .counting: AllocationCounter.mode = .counting
        case .sampling: AllocationCounter.mode = .sampling(everyBytes: sampleInterval)
        }
    }
}

/// One work's chunks: nanoseconds per unit of every chunk, per mode, round by round.
struct PairedSamples {
    var nanosecondsPerUnit: [MeasuredMode: [Double]] = [:]

    /// Each round's chunk in `mode` divided by the same round's "off" chunk.
    func ratios(_ mode: MeasuredMode) -> [Double] {
        zip(nanosecondsPerUnit[mode] ?? [], nanosecondsPerUnit[.off] ?? []).map { $0 / $1 }
    }
}

/// Operations per chunk so that one chunk with the counter off takes about `chunkNanoseconds`.
func calibratedOperations(_ work: Work, chunkNanoseconds: Double) -> Int {
    AllocationCounter.mode = .off
    let probe = max(1, 20_000 / work.unitsPerOperation)
    var perOperation: [Double] = []
    for _ in 0..<7 { perOperation.append(Double(work.run(probe)) / Double(probe)) }
    return max(1, Int(chunkNanoseconds / quantile(perOperation, 0.5)))
}

/// Runs one chunk in counting mode and checks the counter's figures against the work's own:
/// exactly the allocations and frees it makes in the user bucket (none for the polling pass).
func checkedCountingChunk(_ work: Work, operations: Int) -> UInt64 {
    let before = AllocationCounter.currentThread()
    let elapsed = work.run(operations)
    let after = AllocationCounter.currentThread()
    let user = after.user.since(before.user)
    let expected = UInt64(operations * work.userAllocationsPerOperation)
    if user.allocations != expected || user.frees != expected {
        fail("\(work.name): counting mode counted \(user.allocations) allocations and \(user.frees) frees "
             + "in \(operations) operations, expected \(expected) of each")
    }
    if expected > 0 && user.requestedBytes == 0 { fail("\(work.name): counting mode counted no requested bytes") }
    return elapsed
}

/// Context switches of the calling thread so far, voluntary and involuntary. A chunk during
/// which another process ran on the CPU measured that process too.
func contextSwitches() -> Int {
    // RUSAGE_THREAD (1) is declared only under _GNU_SOURCE, which the Glibc module lacks.
    let callingThread = __rusage_who_t(1)
    var usage = rusage()
    if getrusage(callingThread, &usage) != 0 { fail("getrusage failed: errno \(errno)") }
    return usage.ru_nvcsw + usage.ru_nivcsw
}

/// What `pairedRun` returns: the kept rounds' samples, the rounds run, and the sampling mode's
/// samples taken (a sanity figure).
struct PairedRun {
    var samples = PairedSamples()
    var roundsRun = 0
    var samplesTaken: UInt64 = 0
}

/// Warms up, then runs rounds of one chunk per mode, each round in one rotation of the modes'
/// order (the rotations of a block of rounds shuffled), until `rounds` rounds ran without a
/// context switch in any of their chunks (at most 10 × `rounds` tries; a round with a switch is
/// dropped whole, so every kept ratio is a clean pair).
func pairedRun(_ work: Work, operations: Int, rounds: Int, warmUpRounds: Int, sampleInterval: UInt64) -> PairedRun {
    let modes = MeasuredMode.allCases
    var result = PairedRun()
    var kept = 0
    var round = 0
    var rotations: [Int] = []
    // One chunk with the counter off before the rounds, whose first chunk may be in any mode: a
    // work that grows its storage to the chunk's size (the borrowed and handed-over objects)
    // grows it here, where nothing counts it.
    AllocationCounter.mode = .off
    _ = work.run(operations)
    while kept < rounds && result.roundsRun < 10 * rounds {
        if rotations.isEmpty { rotations = Array(0..<modes.count).shuffled() }
        let rotation = rotations.removeLast()
        var roundSamples: [MeasuredMode: Double] = [:]
        var switched = false
        for step in 0..<modes.count {
            let mode = modes[(rotation + step) % modes.count]
            mode.install(sampleInterval: sampleInterval)
            let samplesBefore = AllocationCounter.currentThread().samples
            let switchesBefore = contextSwitches()
            let elapsed = mode == .counting ? checkedCountingChunk(work, operations: operations) : work.run(operations)
            switched = switched || contextSwitches() != switchesBefore
            if mode == .sampling { result.samplesTaken += AllocationCounter.currentThread().samples - samplesBefore }
            roundSamples[mode] = Double(elapsed) / Double(operations * work.unitsPerOperation)
        }
        round += 1
        if round <= warmUpRounds { continue }
        result.roundsRun += 1
        if switched { continue }
        kept += 1
        for (mode, value) in roundSamples { result.samples.nanosecondsPerUnit[mode, default: []].append(value) }
    }
    AllocationCounter.mode = .off
    if kept == 0 { fail("\(work.name): every round had a context switch in one of its chunks") }
    return result
}
