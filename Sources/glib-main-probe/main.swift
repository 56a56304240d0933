// The main-thread side of the "Loop.main under GLib" suite (Tests/RunLoopKitGLibTests): the
// main thread runs GLib's main loop on its default context, as a GTK application does, and GLib
// drives Loop.main (GLibMainContext.host / run). It prints one line per step, "<step>: <what
// ran, in order>", which the suite compares with the same step run by Loop.main itself.
//
//   glib-main-probe   every step, then exits 0
import CGLibRuntime
import Dispatch
import RunLoopCore
import RunLoopKitGLib
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

var trace: [String] = []          // main-actor state, written by the callouts below

@MainActor func finishStep(_ name: String) {
    print("\(name): \(trace.joined(separator: " "))")
    trace.removeAll()
}

var loadError: UnsafePointer<CChar>?
guard let glib = rlk_glib_load(&loadError) else {
    print("glib-main-probe: \(loadError.map { String(cString: $0) } ?? "GLib is not available")")
    exit(2)
}
let context = try GLibMainContext.defaultContext()
let loop = Loop.main
let activities = LoopObserver(activities: [.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit],
                              label: "activities", onMainActor: { _, activity in trace.append(activity.shortName) })
loop.add(activities, mode: .default)

/// mainactor-probe's step "order": a timer's callout queues a @MainActor task, DispatchQueue.main
/// work and a block; the run returns after the timer's pass handled it.
@MainActor func addOrderTimer() throws {
    let timer = try LoopTimer(after: .milliseconds(1), clock: loop.clock, label: "timer", onMainActor: { _ in
        trace.append("timer")
        Task { @MainActor in trace.append("actor") }
        DispatchQueue.main.async { MainActor.assumeIsolated { trace.append("queue") } }
        loop.performOnOwnerThread { trace.append("block") }
    })
    loop.add(timer, mode: .default)
}

try addOrderTimer()
loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true)
finishStep("order, native")

try addOrderTimer()
_ = try context.run(loop, mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true)
finishStep("order, hosted in GLib")

// Step "g_main_loop_run": GLib's own main loop drives Loop.main; a @MainActor job sent from
// another thread runs in it and stops the loop, whose runEnded quits GLib's loop. Then an idle
// second: GLib sleeps once (a GLib timeout of 1 s ends it); the hosted loop never wakes it.
loop.remove(activities, mode: .default)
let mainLoop = glib.pointee.g_main_loop_new(context.pointer, 0)
let hosted = try context.host(loop)
// A stop ends the hosted run; GLib's loop then quits.
hosted.runEnded = { result in
    trace.append("run \(result)")
    glib.pointee.g_main_loop_quit(mainLoop)
}
DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) {
    Task { @MainActor in
        trace.append("job from another thread")
        Loop.main.stop()
    }
}
glib.pointee.g_main_loop_run(mainLoop)
finishStep("g_main_loop_run")

/// What the idle step's GLib timeout quits (a C callback captures nothing).
final class QuitBox {
    let glib: UnsafePointer<rlk_glib>
    let loop: OpaquePointer
    init(_ glib: UnsafePointer<rlk_glib>, _ loop: OpaquePointer) { self.glib = glib; self.loop = loop }
}
let quitLater: rlk_GSourceFunc = { data in
    let box = Unmanaged<QuitBox>.fromOpaque(data!).takeRetainedValue()
    box.glib.pointee.g_main_loop_quit(box.loop)
    return 0
}
hosted.runEnded = nil
// g_main_loop_quit signalled GLib's wake-up descriptor: one iteration without blocking takes it
// (and begins the next hosted run).
_ = glib.pointee.g_main_context_iteration(context.pointer, 0)
let sleepsBefore = hosted.counts.sleeps, dispatchesBefore = hosted.counts.dispatches
let idle = glib.pointee.g_timeout_source_new(1000)
glib.pointee.g_source_set_callback(idle, quitLater, Unmanaged.passRetained(QuitBox(glib, mainLoop)).toOpaque(), nil)
_ = glib.pointee.g_source_attach(idle, context.pointer)
glib.pointee.g_main_loop_run(mainLoop)
glib.pointee.g_source_unref(idle)
print("idle second: \(hosted.counts.sleeps - sleepsBefore) GLib sleep(s), \(hosted.counts.dispatches - dispatchesBefore) loop dispatch(es)")
hosted.end()
glib.pointee.g_main_loop_unref(mainLoop)
exit(0)
