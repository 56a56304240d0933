// port-soak: producers sending to one LoopPortSource made with the library's defaults (issue
// 13's soak, issue 28's "soak with defaults"). A CI tool of this package, not a product.
//
//   swift run -c release port-soak [--seconds 60] [--producers 4] [--capacity N|unbounded] [--batch N]
//
// Prints the resident set every second, then sent/handled and RSS start/max/end; exits 1 when a
// message was lost or the queue did not drain, 2 on a bad argument.
import RunLoopKit
#if canImport(Glibc)
import Glibc
#endif

let usage = "usage: port-soak [--seconds N] [--producers N] [--capacity N|unbounded] [--batch N]   (capacity and batch: the library's defaults unless given)"
var soak = PortSoak()
var seconds = 60
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    if flag == "--help" || flag == "-h" {
        print(usage)
        exit(0)
    }
    guard let text = arguments.popFirst(), let number = flag == "--capacity" && text == "unbounded" ? LoopPortSource.unbounded : Int(text),
          number > 0 else {
        print("port-soak: \(flag) needs a positive whole number\n\(usage)")
        exit(2)
    }
    switch flag {
    case "--seconds": seconds = number
    case "--producers": soak.producers = number
    case "--capacity": soak.capacity = number
    case "--batch": soak.messagesPerPass = number
    default:
        print("port-soak: unknown flag \(flag)\n\(usage)")
        exit(2)
    }
}
soak.sampleInterval = .seconds(1)
print("port-soak: \(soak.producers) producers, capacity \(soak.capacity.map { $0 == LoopPortSource.unbounded ? "unbounded" : String($0) } ?? "default"), "
      + "\(soak.messagesPerPass.map(String.init) ?? "default") messages per pass, \(seconds) s")
let report = try soak.run(for: .seconds(seconds)) { elapsed, resident, handled in
    print("  \(elapsed.components.seconds) s: RSS \(resident / 1024) KiB, handled \(handled)")
}
print(report)
exit(report.drained && report.sent == report.handled ? 0 : 1)
