// port-soak: producers sending to one bounded LoopPortSource (issue 13's soak).
//
//   swift run -c release port-soak [--seconds 60] [--producers 4] [--capacity 4096] [--batch 64]
//
// Prints the resident set every second, then sent/handled and RSS start/max/end; exits 1 when a
// message was lost or the queue did not drain.
import LoopServices
#if canImport(Glibc)
import Glibc
#endif

var soak = PortSoak()
var seconds = 60
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard let text = arguments.popFirst(), let number = Int(text), number > 0 else {
        print("port-soak: \(flag) needs a positive whole number")
        exit(2)
    }
    switch flag {
    case "--seconds": seconds = number
    case "--producers": soak.producers = number
    case "--capacity": soak.capacity = number
    case "--batch": soak.messagesPerPass = number
    default:
        print("port-soak: unknown flag \(flag)")
        exit(2)
    }
}
soak.sampleInterval = .seconds(1)
print("port-soak: \(soak.producers) producers, capacity \(soak.capacity), \(soak.messagesPerPass) messages per pass, \(seconds) s")
let report = try soak.run(for: .seconds(seconds)) { elapsed, resident, handled in
    print("  \(elapsed.components.seconds) s: RSS \(resident / 1024) KiB, handled \(handled)")
}
print(report)
exit(report.drained && report.sent == report.handled ? 0 : 1)
