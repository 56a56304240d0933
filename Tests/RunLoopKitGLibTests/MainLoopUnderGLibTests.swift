import ChildProcesses
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Loop.main under GLib's main loop: a process's main thread runs GLib's main loop on the
/// default context and GLib drives Loop.main (`glib-main-probe`, built with the tests). A test
/// process's main thread is XCTest's or Swift Testing's, so the probe is a process of its own.
@Suite("Loop.main under GLib")
struct MainLoopUnderGLibTests {
    @Test("@MainActor jobs, DispatchQueue.main, a timer and a block run in the same order hosted in GLib as in Loop.main's own run; g_main_loop_run serves a job sent from another thread; an idle second is one GLib sleep")
    func mainLoopHostedInGLib() throws {
        let path = try #require(ChildProcess.besideThisExecutable("glib-main-probe"),
                                "glib-main-probe is missing: it is built with the tests")
        let run = try ChildProcess.run(path)
        #expect(!run.timedOut, "glib-main-probe did not finish within 30 s")
        #expect(run.exitStatus == 0 && !run.killedBySignal, "\(run.output)")
        #expect(run.lines == [
            "order, native: E BT BS BW AW timer block BT BS actor queue X",
            "order, hosted in GLib: E BT BS BW AW timer block BT BS actor queue X",
            "g_main_loop_run: job from another thread run stopped",
            "idle second: 1 GLib sleep(s), 0 loop dispatch(es)",
        ], "\(run.output)")
    }
}
