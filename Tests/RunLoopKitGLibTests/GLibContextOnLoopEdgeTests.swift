import CGLibRuntime
import Dispatch
import LoopInstruments
import PThreads
import RunLoopCore
import Testing
@testable import RunLoopKitGLib
#if canImport(Glibc)
import Glibc
#endif

/// A Loop hosting GLib: refusals, detaching, and descriptors epoll cannot simply follow.
@Suite("GLibContextOnLoop edges")
struct GLibContextOnLoopEdgeTests {
    typealias Fixture = GLibContextOnLoopTests.Fixture

    @Test("A loop on a virtual clock is refused: GLib's timeouts are real time")
    func virtualClockRefused() throws {
        let loop = Loop(clock: VirtualClock())
        defer { loop.tearDown() }
        #expect(throws: GLibError.virtualClock) { try loop.attach(try GLibMainContext(), mode: .default) }
    }

    @Test("A context another thread owns is refused, and nothing is left in the loop")
    func contextOwnedElsewhere() throws {
        let glib = try GLibLibrary.load()
        let context = try GLibMainContext()
        let address = UInt(bitPattern: context.pointer)
        let table = UInt(bitPattern: glib)
        // 1: the other thread owns the context; 2: the test is done with it.
        let stage = Locked(0), changed = PThreadCondition()
        let deadline = MonotonicClock.shared.now.advanced(by: .seconds(10)).nanoseconds
        let thread = startPThread(name: "owner") {
            let glib = UnsafePointer<rlk_glib>(bitPattern: table)!
            let context = OpaquePointer(bitPattern: address)!
            _ = glib.pointee.g_main_context_acquire(context)
            stage.withLock { $0 = 1 }
            changed.broadcast()
            _ = stage.wait(on: changed, untilMonotonicNanoseconds: deadline) { $0 == 2 }
            glib.pointee.g_main_context_release(context)
        }
        defer {
            stage.withLock { $0 = 2 }
            changed.broadcast()
            pthread_join(thread, nil)
        }
        #expect(stage.wait(on: changed, untilMonotonicNanoseconds: deadline) { $0 == 1 })
        let loop = Loop(clock: MonotonicClock.shared)
        defer { loop.tearDown() }
        #expect(throws: GLibError.contextOwnedByAnotherThread) { try loop.attach(context, mode: .default) }
        #expect(loop.isFinished(mode: .default), "no item of the bridge stays in the mode")
    }

    @Test("Detaching removes every item and releases the context")
    func detachRemovesEverything() throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        #expect(!fixture.loop.isFinished(mode: .default))
        #expect(fixture.sources.glib.pointee.g_main_context_is_owner(fixture.context.pointer) != 0)
        fixture.glib.detach()
        fixture.glib.detach()   // idempotent
        #expect(!fixture.glib.isAttached)
        #expect(fixture.loop.isFinished(mode: .default))
        #expect(fixture.sources.glib.pointee.g_main_context_is_owner(fixture.context.pointer) == 0)
        #expect(fixture.loop.run(mode: .default, timeout: .seconds(10)) == .finished)
    }

    @Test("A descriptor number GLib closes and reuses for another file between two waits is still watched (the set is rebuilt)")
    func reusedDescriptorNumberIsWatched() throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let first = try Pipe()
        let firstSource = fixture.sources.readable(first.read, on: fixture.context) { true }
        // One wait registers the first pipe in the set.
        #expect(fixture.loop.run(mode: .default, timeout: .milliseconds(1)) == .timedOut)
        let number = first.read
        fixture.sources.destroy(firstSource)
        // The number now names a new pipe's read end, and the first pipe's read end is closed:
        // epoll's registration of the old file is gone, and the number alone looks unchanged.
        // dup2 does both at once, so no other test's descriptor can take the number meanwhile.
        let second = try Pipe()
        defer { second.close() }
        #expect(dup2(second.read, number) == number)
        defer {
            _ = close(number)
            _ = close(first.write)
        }
        fixture.sources.readable(number, on: fixture.context) {
            second.readByte()
            fixture.loop.stop()
            return true
        }
        let writer = LoopObserver(activities: .beforeWaiting, repeats: false, order: Int.max, label: "writer") { _, _ in
            DispatchQueue.global().async { second.writeByte() }
        }
        fixture.loop.add(writer, mode: .default)
        #expect(fixture.run() == .stopped)
        #expect(fixture.glib.descriptorSetRebuilds == 1)
    }

    @Test("A regular file in GLib's set (epoll refuses it; poll calls it ready) keeps the loop from sleeping, as it keeps GLib")
    func regularFileIsAlwaysReady() throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        var template = Array("/tmp/rlk-glib-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        #expect(fd >= 0)
        defer { _ = close(fd); _ = unlink(template) }
        fixture.sources.readable(fd, on: fixture.context) {
            fixture.recorder.log("readable")
            fixture.loop.stop()
            return true
        }
        #expect(fixture.run() == .stopped)
        // BeforeWaiting wakes the loop, whose wait returns at once; then GLib's check finds the
        // file ready.
        let tokens = fixture.recorder.tokens()
        #expect(tokens.starts(with: ["E", "BT", "BS", "<GLib prepare", ">GLib prepare", "BW", "<GLib query", ">GLib query", "zz", "wake", "AW",
                                     "<GLib descriptors", "\"readable\"", ">GLib descriptors"]), "\(tokens)")
    }

    @Test("A nested loop run inside a GLib callback iterates GLib too; the dispatching source is not re-entered")
    func nestedRunInsideGLibCallback() throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        var order: [String] = []
        fixture.sources.idle(on: fixture.context) {
            order.append("outer idle")
            fixture.sources.timeout(milliseconds: 1, on: fixture.context) {
                order.append("inner timeout")
                fixture.loop.stop()
                return false
            }
            #expect(fixture.loop.run(mode: .default, timeout: .seconds(10)) == .stopped)
            order.append("outer idle returns")
            fixture.loop.stop()
            return false
        }
        #expect(fixture.run() == .stopped)
        #expect(order == ["outer idle", "inner timeout", "outer idle returns"])
    }
}
