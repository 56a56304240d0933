import LoopStress
#if canImport(Glibc)
import Glibc
#endif

// wakeup-stress [seconds-per-path] [hops-per-path]
//
// Runs the lost-wake-up stress (LoopStress's `WakeUpStress`) on every enqueue path: producers on
// CPU 0 hand items one at a time to a loop on the last CPU that sleeps between them; an item
// that waits more than 2 s is a stall, printed with the loop's wake-up state. One line per path;
// exit status 1 when any path stalled. CI runs a release build for 5 s per path (issue 26).

let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--help") || arguments.contains("-h") {
    print("usage: wakeup-stress [seconds-per-path (default 5)] [hops-per-path (default unlimited)]")
    exit(0)
}
let values = Array(arguments)
guard values.count <= 2, let seconds = values.first.map({ Double($0) }) ?? 5.0, seconds > 0,
      let hops = values.count == 2 ? Int(values[1]) : Int.max, hops > 0 else {
    print("wakeup-stress: expected [seconds > 0] [hops > 0], got \(values.joined(separator: " "))")
    exit(2)
}

var stalled = false
for path in EnqueuePath.allCases {
    let report = await WakeUpStress.run(path, hops: hops, seconds: seconds, stallBound: .seconds(2))
    print(report.summary)
    for stall in report.stalls { print("  STALL \(stall)") }
    if !report.stalls.isEmpty { stalled = true }
    if report.hops == 0 { print("  no item was handed over"); stalled = true }
}
exit(stalled ? 1 : 0)
