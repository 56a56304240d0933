// libuv hosts a Loop (Docs/Hosting.md): a timer, a source signalled from another thread and an
// observer, run once by a libuv loop through the core's hosted run; prints what ran.
import Dispatch
import RunLoopCore
import UVHost

let loop = Loop(clock: MonotonicClock.shared)
let observer = LoopObserver(activities: [.beforeWaiting, .afterWaiting], label: "activities") { _, activity in
    print(activity.shortName)
}
loop.add(observer, mode: .default)
let source = LoopSource(label: "from another thread") { print("source") }
loop.add(source, mode: .default)
let timer = try LoopTimer(fireAt: loop.clock.now.advanced(by: .milliseconds(20)), label: "timer") { _ in
    print("timer")
    DispatchQueue.global().async {
        source.signal()
        loop.wakeUp()
    }
}
loop.add(timer, mode: .default)
let outcome = try LoopOnLibuv.run(loop, timeout: .milliseconds(50), returnAfterSourceHandled: true)
print("\(outcome.result) after \(outcome.iterations) libuv iterations, \(outcome.sleeps) of them asleep")
source.invalidate()
timer.invalidate()
observer.invalidate()
