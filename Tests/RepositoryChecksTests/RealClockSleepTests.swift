import Foundation
import Testing

/// Where the tests may sleep on a real clock: one file, whose sleeps are the inputs of the
/// virtual loop's "a real-clock sleep is reported and ended at once" (each ends within one turn
/// of the loop). Everywhere else a test that needs time to pass advances a virtual clock.
enum RealClockSleeps {
    /// The one file allowed to spell a real-clock sleep.
    static let allowedFile = "Tests/RunLoopTestingTests/VirtualLoop/RealClockSleepInputs.swift"

    /// Where test sources are: the package's tests and the examples' (`Examples/*/Tests`). This
    /// target's own directory spells the patterns, so it is left out.
    static let roots = ["Tests", "Examples"]

    /// Spellings of a sleep on a real clock: Swift Concurrency's `Task.sleep` (the continuous
    /// clock), a sleep on a continuous, suspending or RunLoopKit's monotonic clock, Foundation's
    /// `Thread.sleep`, and C's `sleep`, `usleep`, `nanosleep` and `clock_nanosleep`. A sleep on
    /// a virtual clock (`clock.sleep(for:)` with a `VirtualClock`) is none of these.
    static let patterns: [(name: String, regex: NSRegularExpression)] = [
        ("Task.sleep", #"\bTask\s*\.\s*sleep\s*\("#),
        ("a continuous or suspending clock's sleep", #"\b(?:ContinuousClock|SuspendingClock)\s*\(\s*\)\s*\.\s*sleep\b"#),
        ("a sleep on .continuous or .suspending", #"\bclock\s*:\s*\.(?:continuous|suspending)\b"#),
        ("MonotonicClock's sleep", #"\bMonotonicClock\s*\.\s*shared\s*\.\s*sleep\b"#),
        ("Thread.sleep", #"\bThread\s*\.\s*sleep\b"#),
        ("C's sleep", #"(?<![.\w])(?:sleep|usleep|nanosleep|clock_nanosleep)\s*\("#),
    ].map { ($0.0, try! NSRegularExpression(pattern: $0.1)) }

    /// The patterns that match `code`.
    static func matches(in code: String) -> [String] {
        let range = NSRange(code.startIndex..., in: code)
        return patterns.filter { $0.regex.firstMatch(in: code, range: range) != nil }.map(\.name)
    }

    /// Every Swift file under `roots`, relative to the repository root, sorted.
    static func swiftFiles() -> [String] {
        var result: [String] = []
        for top in roots {
            guard let walker = FileManager.default.enumerator(atPath: RepositoryText.root.appendingPathComponent(top).path)
            else { continue }
            while let relative = walker.nextObject() as? String {
                let path = top + "/" + relative
                guard path.hasSuffix(".swift"), !path.contains("/.build/"),
                      path.hasPrefix("Tests/") || path.contains("/Tests/"),
                      !RepositoryText.excludedDirectories.contains(where: { path.hasPrefix($0 + "/") })
                else { continue }
                result.append(path)
            }
        }
        return result.sorted()
    }
}

@Suite("RepositoryChecks: real-clock sleeps in tests")
struct RealClockSleepTests {
    @Test("No test sleeps on a real clock outside RealClockSleepInputs.swift")
    func realClockSleepsStayInOneFile() throws {
        var found: [String] = []
        var allowedFileSleeps = 0
        for path in RealClockSleeps.swiftFiles() {
            let source = try String(contentsOf: RepositoryText.root.appendingPathComponent(path), encoding: .utf8)
            for (index, code) in SourceProse(isC: false).code(of: source).enumerated() {
                let kinds = RealClockSleeps.matches(in: code)
                guard !kinds.isEmpty else { continue }
                if path == RealClockSleeps.allowedFile {
                    allowedFileSleeps += 1
                } else {
                    found.append("\(path):\(index + 1): [\(kinds.joined(separator: ", "))] \(code.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(found.isEmpty, "real-clock sleeps outside \(RealClockSleeps.allowedFile):\n\(found.joined(separator: "\n"))")
        #expect(allowedFileSleeps > 0, "the check found no sleep in \(RealClockSleeps.allowedFile): are its patterns still right?")
        #expect(RealClockSleeps.swiftFiles().contains { $0.hasPrefix("Examples/") }, "the examples' tests were not read")
    }

    @Test("The check finds each spelling in code, and none in comments or strings")
    func patternsMatchCodeOnly() {
        let samples = [
            "try await Task.sleep(for: .milliseconds(5))",
            "try await ContinuousClock().sleep(for: .seconds(1))",
            "try await Task.sleep(until: .now + .seconds(1), clock: .suspending)",
            "try await MonotonicClock.shared.sleep(for: .seconds(1))",
            "Thread.sleep(forTimeInterval: 0.1)",
            "usleep(1000)",
            "_ = sleep(1)",
        ]
        for sample in samples {
            #expect(!RealClockSleeps.matches(in: SourceProse(isC: false).code(of: sample)[0]).isEmpty, "\(sample)")
        }
        let notSleeps = [
            "try await test.clock.sleep(for: .seconds(1))           // a virtual clock",
            "#expect(text == \"idle second: 1 GLib sleep(s), 0 loop dispatch(es)\")",
            "/// Task.sleep(for:) would wait here",
            "let sleepingTaskCount = clock.sleepingTaskCount",
        ]
        for sample in notSleeps {
            #expect(RealClockSleeps.matches(in: SourceProse(isC: false).code(of: sample)[0]).isEmpty, "\(sample)")
        }
    }
}
