import CGLibRuntime
import Dispatch
import LoopInstruments
import RunLoopCore
import RunLoopDiagnostics
import Testing
@testable import RunLoopKitGLib
#if canImport(Glibc)
import Glibc
#endif

/// A Loop hosts GLib: a GMainContext attached to a loop mode runs its sources as loop callouts.
/// Every run has a deadline (10 s) that a passing test never reaches: the GLib callback stops it.
@Suite("GLibContextOnLoop")
struct GLibContextOnLoopTests {
    /// A real-clock loop with a trace of every activity, hosting a new context in `.default`.
    final class Fixture {
        let sources: GLibSources
        let context: GLibMainContext
        let loop: Loop
        let recorder = TraceRecorder()
        let glib: GLibContextOnLoop

        init() throws {
            sources = try GLibSources()
            context = try GLibMainContext()
            loop = Loop(clock: MonotonicClock.shared)
            recorder.attach(to: loop)
            recorder.observeActivities(on: loop)
            glib = try loop.attach(context, mode: .default)
        }

        func run() -> Loop.RunResult { loop.run(mode: .default, timeout: .seconds(10)) }

        /// Detaches, tears the loop down and destroys the test's GLib sources, whose closures
        /// capture the fixture (so this cannot wait for deinit).
        func close() {
            glib.detach()
            loop.tearDown()
            sources.destroyAll()
        }
    }

    @Test("An idle GLib source dispatches in the first pass, inside the source0 'GLib dispatch'; the pass does not sleep")
    func idleSourceDispatchesInLoopCallout() throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        fixture.sources.idle(on: fixture.context) {
            fixture.recorder.log("idle")
            fixture.loop.stop()
            return false
        }
        #expect(fixture.run() == .stopped)
        let tokens = fixture.recorder.tokens()
        #expect(tokens == ["E", "BT", "BS", "<GLib prepare", ">GLib prepare", "<GLib dispatch", "\"idle\"", ">GLib dispatch", "X"],
                "\(tokens)")
    }

    @Test("A GLib timeout wakes the sleeping loop through the timer 'GLib timeout', after BeforeWaiting's query")
    func timeoutFiresThroughLoopTimer() throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let start = MonotonicClock.shared.now
        fixture.sources.timeout(milliseconds: 20, on: fixture.context) {
            fixture.recorder.log("timeout")
            fixture.loop.stop()
            return false
        }
        #expect(fixture.run() == .stopped)
        #expect(start.duration(to: MonotonicClock.shared.now) >= .milliseconds(20))
        let tokens = fixture.recorder.tokens()
        #expect(tokens == ["E", "BT", "BS", "<GLib prepare", ">GLib prepare", "BW", "<GLib query", ">GLib query", "zz", "wake", "AW",
                           "<GLib timeout", "\"timeout\"", ">GLib timeout", "X"], "\(tokens)")
    }

    @Test("A descriptor of a GLib source, made readable by another thread, wakes the loop through 'GLib descriptors'")
    func descriptorWakesLoop() throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let pipe = try Pipe()
        defer { pipe.close() }
        fixture.sources.readable(pipe.read, on: fixture.context) {
            pipe.readByte()
            fixture.recorder.log("readable")
            fixture.loop.stop()
            return true
        }
        // The write happens once the loop is asleep: from BeforeWaiting's last observer on.
        let writer = LoopObserver(activities: .beforeWaiting, repeats: false, order: Int.max, label: "writer") { _, _ in
            DispatchQueue.global().async { pipe.writeByte() }
        }
        fixture.loop.add(writer, mode: .default)
        #expect(fixture.run() == .stopped)
        let tokens = fixture.recorder.tokens(skippingLabels: ["writer"])
        #expect(tokens == ["E", "BT", "BS", "<GLib prepare", ">GLib prepare", "BW", "<GLib query", ">GLib query", "zz", "wake", "AW",
                           "<GLib descriptors", "\"readable\"", ">GLib descriptors", "X"], "\(tokens)")
    }

    @Test("GLib's wake-up descriptor, signalled when a descriptor is added on its own thread, is acknowledged before the loop sleeps")
    func addedDescriptorDoesNotWakeLoop() throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let pipe = try Pipe()
        defer { pipe.close() }
        fixture.sources.readable(pipe.read, on: fixture.context) { true }
        let start = MonotonicClock.shared.now
        #expect(fixture.loop.run(mode: .default, timeout: .milliseconds(30)) == .timedOut)
        #expect(start.duration(to: MonotonicClock.shared.now) >= .milliseconds(30))
        let tokens = fixture.recorder.tokens()
        #expect(tokens == ["E", "BT", "BS", "<GLib prepare", ">GLib prepare", "BW", "<GLib query", ">GLib query", "zz", "wake", "AW", "X"],
                "\(tokens)")
    }

    @Test("g_main_context_invoke from another thread wakes the sleeping loop (GLib's wake-up descriptor is in the set)")
    func crossThreadInvokeWakesLoop() throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let box = Unmanaged.passRetained(fixture).toOpaque()
        let invoke: rlk_GSourceFunc = { data in
            let fixture = Unmanaged<Fixture>.fromOpaque(data!).takeRetainedValue()
            fixture.recorder.log("invoked")
            fixture.loop.stop()
            return 0
        }
        // Addresses travel to the other thread; GLib's functions are thread-safe.
        let data = UInt(bitPattern: box)
        let glib = UInt(bitPattern: fixture.sources.glib)
        let context = UInt(bitPattern: fixture.context.pointer)
        let writer = LoopObserver(activities: .beforeWaiting, repeats: false, order: Int.max, label: "invoker") { _, _ in
            DispatchQueue.global().async {
                let table = UnsafePointer<rlk_glib>(bitPattern: glib)!
                table.pointee.g_main_context_invoke(OpaquePointer(bitPattern: context)!, invoke, UnsafeMutableRawPointer(bitPattern: data))
            }
        }
        fixture.loop.add(writer, mode: .default)
        #expect(fixture.run() == .stopped)
        let tokens = fixture.recorder.tokens(skippingLabels: ["invoker"])
        #expect(tokens == ["E", "BT", "BS", "<GLib prepare", ">GLib prepare", "BW", "<GLib query", ">GLib query", "zz", "wake", "AW",
                           "<GLib descriptors", "\"invoked\"", ">GLib descriptors", "X"], "\(tokens)")
    }

    @Test("A GLib source attached by a loop callout of this pass is seen before the loop sleeps (BeforeWaiting's query wakes it)")
    func sourceAttachedDuringPassIsNotLost() throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let bound = LoopBound(fixture, loop: fixture.loop)
        let source = LoopSource(label: "attach idle") {
            let fixture = bound.value
            fixture.sources.idle(on: fixture.context) {
                fixture.recorder.log("idle")
                fixture.loop.stop()
                return false
            }
        }
        fixture.loop.add(source, mode: .default)
        // Signalled from the first BeforeSources on (after GLib's prepare): the idle source is
        // attached after that prepare, by a source0 of the same pass.
        let signaller = LoopObserver(activities: .beforeSources, repeats: false, order: 0, label: "signaller") { _, _ in source.signal() }
        fixture.loop.add(signaller, mode: .default)
        // The source0 makes the first pass poll; the second pass's prepare finds the idle.
        #expect(fixture.run() == .stopped)
        let tokens = fixture.recorder.tokens(skippingLabels: ["signaller"])
        #expect(tokens == ["E", "BT", "BS", "<GLib prepare", ">GLib prepare", "<attach idle", ">attach idle",
                           "BT", "BS", "<GLib prepare", ">GLib prepare", "<GLib dispatch", "\"idle\"", ">GLib dispatch", "X"], "\(tokens)")
    }

    @Test("An idle GLib source attached by a BeforeWaiting observer makes the wait return at once, and runs next pass")
    func sourceAttachedAtBeforeWaitingWakesLoop() throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let bound = LoopBound(fixture, loop: fixture.loop)
        let attacher = LoopObserver(activities: .beforeWaiting, repeats: false, order: 2_000_000, label: "commit") { _, _ in
            let fixture = bound.value
            fixture.sources.idle(on: fixture.context) {
                fixture.recorder.log("idle")
                fixture.loop.stop()
                return false
            }
        }
        fixture.loop.add(attacher, mode: .default)
        let start = MonotonicClock.shared.now
        #expect(fixture.run() == .stopped)
        #expect(start.duration(to: MonotonicClock.shared.now) < .seconds(5))
        let tokens = fixture.recorder.tokens()
        #expect(tokens == ["E", "BT", "BS", "<GLib prepare", ">GLib prepare", "BW", "<commit", ">commit", "<GLib query", ">GLib query",
                           "zz", "wake", "AW", "BT", "BS", "<GLib prepare", ">GLib prepare", "<GLib dispatch", "\"idle\"", ">GLib dispatch", "X"],
                "\(tokens)")
    }
}
