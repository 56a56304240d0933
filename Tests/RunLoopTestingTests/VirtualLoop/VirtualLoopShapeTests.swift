import RunLoopTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Each shape of `VirtualLoopShapes`, run `runs` times: every run must see the expected order
/// and report nothing. `RLK_VIRTUAL_LOOP_RUNS` overrides the count (CI's sanitizer runs lower it).
@Suite struct VirtualLoopShapeTests {
    static let runs = getenv("RLK_VIRTUAL_LOOP_RUNS").flatMap { Int(String(cString: $0)) } ?? 10_000

    @Test(arguments: VirtualLoopShapes.all.map(\.name))
    func everyRunSeesTheSameOrder(_ name: String) async throws {
        let shape = try #require(VirtualLoopShapes.all.first { $0.name == name })
        let reporter = CollectingLoopTestReporter()
        var failures = 0
        var firstFailure: String?
        for _ in 0..<Self.runs {
            let seen = try await shape.run(reporter)
            if seen != shape.expected || !reporter.failures.isEmpty {
                failures += 1
                if firstFailure == nil { firstFailure = "saw \(seen); reported: \(reporter.messages)" }
                reporter.removeAll()
            }
        }
        #expect(failures == 0, "\(failures) of \(Self.runs) runs differed; the first: \(firstFailure ?? "")")
    }
}
