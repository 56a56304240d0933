import Glibc
import LoopServices
import Testing

/// The short form of issue 13's soak (the 60 s run is `swift run -c release port-soak`).
@Suite("PortSoak")
struct PortSoakTests {
    @Test("4 producers for 2 s into one bounded port: nothing lost, the queue drains, RSS flat")
    func boundedPortHoldsUnderFourProducers() async {
        // A process of its own: in the shared test process other suites move RSS in parallel.
        await #expect(processExitsWith: .success) {
            let report = try PortSoak(producers: 4, capacity: 1024, messagesPerPass: 64).run(for: .seconds(2))
            #expect(report.drained, "the consumer did not handle every message within 30 s: \(report)")
            #expect(report.sent == report.handled, "\(report)")
            #expect(report.sent > 0, "no producer sent anything: \(report)")
            // Unbounded, 2 s of producers outrunning one consumer queued hundreds of MiB (issue 13);
            // bounded at 1024 messages, the queue itself is under 100 KiB.
            // Under AddressSanitizer freed memory waits in its quarantine (256 MiB by default), so
            // RSS says nothing about the queue there.
            if dlsym(nil, "__asan_init") == nil {   // nil: RTLD_DEFAULT, every loaded object
                #expect(report.residentMaximum - report.residentAtStart < 32 * 1024 * 1024, "\(report)")
            }
        }
    }
}
