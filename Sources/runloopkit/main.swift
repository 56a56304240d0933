// The main job: runs the documented scenarios and writes their traces, Chrome trace JSON and
// SVG charts to ./runloopkit-out/.
import LoopScenarios
import RunLoopTesting
import ScenarioReplay
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

let outputDirectory = "runloopkit-out"

let usage = """
    usage: runloopkit [SCENARIO | --list | --help]
           runloopkit record SCENARIO FILE
           runloopkit replay SCENARIO FILE
           runloopkit explain FILE

      (no argument)  run every documented scenario, print ✓/✗ per scenario (with the
                     expected-vs-produced diff and failed checks for ✗), write traces (.log),
                     Chrome trace JSON (.json, open in ui.perfetto.dev) and SVG charts to
                     ./\(outputDirectory)/, and end with "scenarios: N passed, M failed"
      SCENARIO       run one scenario and print its verbose trace, checks and result
      --list         list the scenarios with a one-line summary
      record         run one scenario and write its replay trace to FILE (format: Docs/Replay.md)
      replay         run one scenario again as FILE recorded it and print the first line
                     where the two traces part (exit 1), or that they are identical. FILE
                     must be a regular file of at most 64 MiB with lines of at most 64 KiB
                     (LF or CRLF); anything else is refused with one line (exit 1)
      explain        print, for each callout of the trace FILE, the rule ids (Docs/Rules.md)
                     that placed it and what it waited for
      --help         show this text

    exit status: 0 all passed, 1 a scenario failed (or a trace could not be read or
    written, or a replay departed from its recording), 2 bad usage
    """

func fail(_ message: String) -> Never {
    var stderr = StandardError()
    print("runloopkit: \(message)", to: &stderr)
    print("run 'runloopkit --help' for usage", to: &stderr)
    exit(2)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        var bytes = Array(string.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

/// Writes a result's artifacts; returns how many files were written.
func writeArtifacts(_ result: ScenarioResult) -> Int {
    let (written, errors) = result.writeArtifacts(to: outputDirectory)
    var stderr = StandardError()
    for error in errors { print("runloopkit: \(error)", to: &stderr) }
    return written
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case nil:
    var passed = 0, failed = 0, skipped = 0, files = 0
    // One at a time, so the process is quiet enough for the descriptor checks.
    for scenario in ScenarioCatalog.all {
        if let reason = scenario.unavailableReason {
            print("- \(scenario.name): skipped: \(reason)")
            skipped += 1
            continue
        }
        let result = scenario.run(ScenarioOptions(processIsQuiet: true))
        print(ScenarioReport.line(result))
        for line in ScenarioReport.failureDetails(result) { print(line) }
        files += writeArtifacts(result)
        if result.passed { passed += 1 } else { failed += 1 }
    }
    print("wrote \(files) files to ./\(outputDirectory)/")
    print("scenarios: \(passed) passed, \(failed) failed" + (skipped > 0 ? ", \(skipped) skipped" : ""))
    exit(failed > 0 ? 1 : 0)
case "--help", "-h":
    guard arguments.count == 1 else { fail("--help takes no further arguments") }
    print(usage)
case "--list":
    guard arguments.count == 1 else { fail("--list takes no further arguments") }
    let width = ScenarioCatalog.all.map(\.name.count).max() ?? 0
    for scenario in ScenarioCatalog.all {
        print(scenario.name + String(repeating: " ", count: width - scenario.name.count + 2) + scenario.summary)
    }
case "record":
    guard arguments.count == 3 else { fail("record takes a scenario name and a file, got \(arguments.count - 1) arguments") }
    guard let scenario = ScenarioCatalog.named(arguments[1]) else {
        fail("unknown scenario '\(arguments[1])'; known: \(ScenarioCatalog.all.map(\.name).joined(separator: ", "))")
    }
    let result = scenario.run(ScenarioOptions(processIsQuiet: true))
    let trace = ReplayTrace(scenario: result)
    do { try trace.write(to: arguments[2]) } catch {
        var stderr = StandardError()
        print("runloopkit: \(error)", to: &stderr)
        exit(1)
    }
    print("wrote \(trace.entries.count) entries of \(scenario.name) to \(arguments[2])")
case "replay":
    guard arguments.count == 3 else { fail("replay takes a scenario name and a file, got \(arguments.count - 1) arguments") }
    guard let scenario = ScenarioCatalog.named(arguments[1]) else {
        fail("unknown scenario '\(arguments[1])'; known: \(ScenarioCatalog.all.map(\.name).joined(separator: ", "))")
    }
    do {
        let outcome = try scenario.replay(try TraceFileInput.read(arguments[2]))
        for problem in outcome.result.replayProblems { print("replay problem: \(TraceFileInput.shortened("\(problem)"))") }
        if let divergence = outcome.divergence {
            print("\(scenario.name) departs from \(arguments[2]): \(TraceFileInput.describe(divergence))")
            exit(1)
        }
        print("\(scenario.name) replays \(arguments[2]) identically")
        exit(outcome.result.replayProblems.isEmpty ? 0 : 1)
    } catch {
        var stderr = StandardError()
        print("runloopkit: \(error)", to: &stderr)
        exit(1)
    }
case "explain":
    guard arguments.count == 2 else { fail("explain takes one trace file, got \(arguments.count - 1) arguments") }
    do {
        print(TraceExplainer.text(try TraceFileInput.read(arguments[1])), terminator: "")
    } catch {
        var stderr = StandardError()
        print("runloopkit: \(error)", to: &stderr)
        exit(1)
    }
case let name?:
    if name.hasPrefix("-") { fail("unknown option '\(name)'") }
    guard arguments.count == 1 else { fail("expected one scenario name, got \(arguments.count) arguments") }
    guard let scenario = ScenarioCatalog.named(name) else {
        fail("unknown scenario '\(name)'; known: \(ScenarioCatalog.all.map(\.name).joined(separator: ", "))")
    }
    let result = scenario.run(ScenarioOptions(processIsQuiet: true))
    print(ScenarioReport.fullText(result))
    let files = writeArtifacts(result)
    print("wrote \(files) files to ./\(outputDirectory)/")
    exit(result.passed ? 0 : 1)
}
