import Testing
import RunLoopCore
@testable import LoopInstruments

/// True when mallinfo2 reports the heap (glibc's allocator is in use).
let glibcMallocIsActive = ProcessMemory.heapInUseBytes() > 0

@Suite struct MemoryProbeTests {
    @Test func readsResidentSet() {
        #expect(ProcessMemory.residentBytes() > 0)
    }

    /// Sanitizers replace glibc's malloc, and then mallinfo2 sees nothing.
    @Test(.enabled(if: glibcMallocIsActive, "malloc is not glibc's (sanitizer build)"))
    func readsHeapInUse() {
        let before = ProcessMemory.heapInUseBytes()
        let buffer = [UInt8](repeating: 1, count: 1 << 20)
        #expect(ProcessMemory.heapInUseBytes() >= buffer.count)
        #expect(before > 0)
        #expect(buffer.count == 1 << 20)
    }

    @Test func parsesStatm() {
        let text = Array("4242 1234 99 1 0 500 0\n".utf8)
        #expect(text.withUnsafeBytes { ProcessMemory.secondField($0) } == 1234)
        #expect(Array("17".utf8).withUnsafeBytes { ProcessMemory.secondField($0) } == nil)
        #expect(Array("17 23".utf8).withUnsafeBytes { ProcessMemory.secondField($0) } == 23)
    }

    @Test func samplesOnDemandWithInjectedPoolStatisticsAndRecords() {
        let clock = ManualClock(at(ns: 5))
        let recorder = TraceRecorder(clock: clock)
        let probe = MemoryProbe(clock: clock, recorder: recorder) { PoolSnapshot(pendingEntries: 7, pages: 1, bytes: 4096) }
        let sample = probe.sample(label: "now")
        #expect(sample.time == at(ns: 5))
        #expect(sample.pool.pendingEntries == 7)
        #expect(sample.residentBytes > 0)
        #expect(probe.samples == [sample])
        #expect(recorder.entries.map(\.kind) == [.memory(sample)])
        probe.clear()
        #expect(probe.samples.isEmpty)
    }

    @Test func boundedSeries() {
        let probe = MemoryProbe(clock: ManualClock(), readsProcess: false, poolStatistics: { .zero }, capacity: 2)
        for index in 0..<3 { probe.sample(label: "\(index)") }
        #expect(probe.samples.map(\.label) == ["1", "2"])
        #expect(probe.samples.allSatisfy { $0.residentBytes == 0 })
    }
}
