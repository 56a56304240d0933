import Testing
import LoopStress
#if canImport(Glibc)
import Glibc
#endif

/// The lost-wake-up stress (`LoopStress.WakeUpStress`, issue 26) on every enqueue path, for a
/// short bounded time per path in the test build. Its sharper run is the release tool
/// `wakeup-stress`, which CI runs for 5 s per path (a debug build's slower passes hit the race
/// window far less often). `RLK_WAKEUP_STRESS_SECONDS` / `RLK_WAKEUP_STRESS_HOPS` lengthen it.
@Suite("Lost wake-up stress", .serialized)
struct LostWakeUpStressTests {
    @Test("no item waits for a lost wake-up, for every enqueue path", arguments: EnqueuePath.allCases)
    func noItemWaitsForALostWakeUp(path: EnqueuePath) async {
        let report = await WakeUpStress.run(path, hops: StressLimits.hops, seconds: StressLimits.seconds,
                                            stallBound: .seconds(2))
        #expect(report.stalls.isEmpty, """
            \(report.summary); the loop's wake-up state at each stall:
            \(report.stalls.joined(separator: "\n"))
            """)
        #expect(report.hops > 0, "\(path.rawValue): no item was handed over")
        if path.usesWakeUpDescriptor {
            // The loop really slept between items: some hand-overs needed the eventfd.
            #expect(report.wakeUpWrites > 0, "\(path.rawValue): the loop never slept between items")
        }
    }
}

/// How much each path runs: the environment's numbers, or the defaults of the test run.
private enum StressLimits {
    static var hops: Int { environmentNumber("RLK_WAKEUP_STRESS_HOPS").map { Int($0) } ?? 100_000 }
    static var seconds: Double { environmentNumber("RLK_WAKEUP_STRESS_SECONDS") ?? 0.5 }

    private static func environmentNumber(_ name: String) -> Double? {
        guard let text = getenv(name) else { return nil }
        return Double(String(cString: text))
    }
}
