import CGLibRuntime
import Dispatch
import RunLoopCore
import Testing
@testable import RunLoopKitGLib
#if canImport(Glibc)
import Glibc
#endif

/// GLib hosts a loop: the GSource and the poll function around a stand-in for the core's
/// hosted run, which records the calls GLib's iteration makes. Every GLib run has a 10 s
/// timeout source that quits it; a passing test never reaches it.
@Suite("LoopOnGLibContext plumbing")
struct LoopOnGLibContextPlumbingTests {
    /// Records the calls; its descriptor is a pipe's read end, readable while a byte is in it.
    final class RecordingRun: HostDrivenRun {
        let pipe: Pipe
        /// What each prepare returns: the first wait once, then the last one's again.
        var waits: [HostWait]
        /// When set, the first prepare sets a deadline this far ahead, and every prepare returns
        /// it (so a slow start cannot use the wait up before GLib polls).
        var waitFromFirstPrepare: Duration?
        private var deadline: LoopInstant?
        var log: [String] = []
        var onDispatch: () -> Loop.RunResult? = { nil }
        /// Called in hostWillSleep, as a BeforeWaiting observer would be.
        var onSleep: () -> Void = {}
        private(set) var result: Loop.RunResult?

        init(pipe: Pipe, waits: [HostWait]) {
            self.pipe = pipe
            self.waits = waits
        }

        var descriptor: Int32 { pipe.read }
        func prepare() -> HostWait {
            log.append("prepare")
            if let wait = waitFromFirstPrepare {
                let deadline = self.deadline ?? MonotonicClock.shared.now.advanced(by: wait)
                self.deadline = deadline
                return .until(deadline)
            }
            return waits.count > 1 ? waits.removeFirst() : waits.first ?? .indefinitely
        }
        func hostWillSleep() {
            log.append("sleep")
            onSleep()
        }
        func hostDidWake() { log.append("wake") }
        func dispatch() -> Loop.RunResult? {
            log.append("dispatch")
            return onDispatch()
        }
        func end() -> Loop.RunResult {
            log.append("end")
            return result ?? .stopped
        }
    }

    /// A GLib main loop on a new context hosting `run` for a real-clock loop.
    final class Fixture {
        let sources: GLibSources
        let context: GLibMainContext
        let loop = Loop(clock: MonotonicClock.shared)
        let pipe: Pipe
        let run: RecordingRun
        var runs = 0
        let mainLoop: OpaquePointer
        var bridge: LoopOnGLibContext!

        init(waits: [HostWait]) throws {
            sources = try GLibSources()
            context = try GLibMainContext()
            pipe = try Pipe()
            run = RecordingRun(pipe: pipe, waits: waits)
            mainLoop = sources.glib.pointee.g_main_loop_new(context.pointer, 0)
            let run = self.run
            bridge = try LoopOnGLibContext(context: context, loop: loop, mode: .default, priority: 0) { [unowned self] in
                runs += 1
                return run
            }
        }

        func quit() { sources.glib.pointee.g_main_loop_quit(mainLoop) }

        /// Runs GLib iterations that do not block until none dispatches anything: what is
        /// pending (GLib's wake-up descriptor, signalled when a descriptor was added) is consumed.
        func settle() {
            var rounds = 0
            while sources.glib.pointee.g_main_context_iteration(context.pointer, 0) != 0 && rounds < 10 { rounds += 1 }
        }

        /// Runs GLib's main loop until a callback quits it (or 10 s pass: then false).
        func runGLib() -> Bool {
            var timedOut = false
            let deadline = sources.timeout(milliseconds: 10_000, on: context) { [self] in
                timedOut = true
                quit()
                return false
            }
            sources.glib.pointee.g_main_loop_run(mainLoop)
            if !timedOut { sources.removeSource(id: deadline, from: context) }
            return !timedOut
        }

        /// Ends the bridge and frees what the fixture made; the closures the tests give the
        /// run and GLib capture the fixture, so this cannot wait for deinit.
        func close() {
            run.onDispatch = { nil }
            run.onSleep = {}
            bridge?.end()
            bridge = nil
            sources.destroyAll()
            sources.glib.pointee.g_main_loop_unref(mainLoop)
            pipe.close()
            loop.tearDown()
        }
    }

    @Test("A pass that must not wait: prepare says ready, GLib dispatches without polling for long (no sleep)")
    func zeroWaitDispatchesWithoutSleep() throws {
        let fixture = try Fixture(waits: [.no, .indefinitely])
        defer { fixture.close() }
        fixture.run.onDispatch = { fixture.quit(); return nil }
        #expect(fixture.runGLib())
        #expect(fixture.run.log == ["prepare", "dispatch"])
        #expect(fixture.bridge.counts.sleeps == 0)
    }

    @Test("The loop's descriptor, written by another thread, wakes GLib's poll: sleep, wake, dispatch")
    func descriptorWakesGLib() throws {
        let fixture = try Fixture(waits: [.indefinitely])
        defer { fixture.close() }
        fixture.run.onDispatch = { fixture.pipe.readByte(); fixture.quit(); return nil }
        let pipe = fixture.pipe
        fixture.sources.idle(on: fixture.context) {
            DispatchQueue.global().async { pipe.writeByte() }
            return false
        }
        #expect(fixture.runGLib())
        // The idle makes the first poll a zero-timeout one: no sleep around it.
        #expect(fixture.run.log == ["prepare", "prepare", "sleep", "wake", "dispatch"])
        #expect(fixture.bridge.counts == .init(sleeps: 1, prepares: 2, dispatches: 1))
    }

    @Test("The loop's next timer becomes GLib's timeout (rounded up to a millisecond); check finds the deadline reached")
    func deadlineBecomesTimeout() throws {
        let fixture = try Fixture(waits: [.indefinitely])
        defer { fixture.close() }
        fixture.run.onDispatch = { fixture.quit(); return nil }
        let start = MonotonicClock.shared.now
        fixture.run.waitFromFirstPrepare = .microseconds(15_500)
        #expect(fixture.runGLib())
        #expect(start.duration(to: MonotonicClock.shared.now) >= .microseconds(15_500))
        // GLib's wake-up descriptor, signalled when the source's descriptor was added, may end
        // the first poll early; the check then finds the deadline not reached and GLib sleeps
        // again for the rest.
        #expect(fixture.run.log.suffix(4) == ["prepare", "sleep", "wake", "dispatch"])
        #expect(!fixture.run.log.dropLast().contains("dispatch"))
    }

    @Test("A GLib source attached at BeforeWaiting (inside GLib's poll) is not missed: GLib's poll is bounded by it")
    func sourceAttachedAtBeforeWaitingCounts() throws {
        let fixture = try Fixture(waits: [.indefinitely])
        defer { fixture.close() }
        fixture.settle()
        var attached = false
        fixture.run.onSleep = {
            // A commit that updates a GTK widget attaches GLib sources here (a redraw).
            guard !attached else { return }
            attached = true
            fixture.sources.timeout(milliseconds: 5, on: fixture.context) {
                fixture.quit()
                return false
            }
        }
        let start = MonotonicClock.shared.now
        #expect(fixture.runGLib())
        #expect(start.duration(to: MonotonicClock.shared.now) < .seconds(5))
        #expect(fixture.bridge.counts.sleeps >= 1)
    }

    @Test("A descriptor GLib adds at BeforeWaiting is polled in the same sleep")
    func descriptorAddedAtBeforeWaitingCounts() throws {
        let fixture = try Fixture(waits: [.indefinitely])
        defer { fixture.close() }
        let pipe = try Pipe()
        defer { pipe.close() }
        pipe.writeByte()
        fixture.settle()
        var attached = false
        fixture.run.onSleep = {
            guard !attached else { return }
            attached = true
            fixture.sources.readable(pipe.read, on: fixture.context) {
                fixture.quit()
                return false
            }
        }
        #expect(fixture.runGLib())
    }

    @Test("A run that ends is reported to runEnded; the next GLib iteration begins a new one")
    func endedRunIsReplaced() throws {
        let fixture = try Fixture(waits: [.no])
        defer { fixture.close() }
        var dispatches = 0
        fixture.run.onDispatch = {
            dispatches += 1
            if dispatches == 2 { fixture.quit() }
            return dispatches == 1 ? .stopped : nil
        }
        var ended: [Loop.RunResult] = []
        fixture.bridge.runEnded = { ended.append($0) }
        #expect(fixture.runGLib())
        #expect(ended == [.stopped])
        #expect(fixture.runs == 2)
        #expect(fixture.run.log == ["prepare", "dispatch", "prepare", "dispatch"])
    }

    @Test("end() ends the run, gives the context its poll function back, and GLib's finalize releases the bridge")
    func endRestoresEverything() throws {
        let fixture = try Fixture(waits: [.indefinitely])
        defer { fixture.close() }
        let glib = fixture.sources.glib
        func address(_ function: rlk_GPollFunc) -> UnsafeRawPointer { unsafeBitCast(function, to: UnsafeRawPointer.self) }
        let hooked: rlk_GPollFunc = rlk_glib_hooked_poll
        #expect(address(glib.pointee.g_main_context_get_poll_func(fixture.context.pointer)) == address(hooked))
        weak let released = fixture.bridge
        #expect(fixture.runs == 0)   // the run begins at GLib's first prepare
        fixture.settle()
        fixture.bridge.end()
        fixture.bridge.end()   // idempotent
        #expect(fixture.run.log == ["prepare", "end"])
        #expect(address(glib.pointee.g_main_context_get_poll_func(fixture.context.pointer)) == address(glib.pointee.g_poll))
        #expect(rlk_glib_sleep_hooks_current() == nil)
        fixture.bridge = nil
        #expect(released == nil)
    }

    @Test("A second hosted loop on the same thread is refused")
    func secondHostRefused() throws {
        let fixture = try Fixture(waits: [.indefinitely])
        defer { fixture.close() }
        #expect(throws: GLibError.alreadyHostingOnThisThread) {
            try LoopOnGLibContext(context: try GLibMainContext(), loop: fixture.loop, mode: .default, priority: 0) { fixture.run }
        }
    }
}
