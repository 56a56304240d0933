// Tokens from another thread, stale tokens and forged tokens: the checked pop throws a
// clear error and releases nothing; the unchecked pop traps with objc4's text.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Autorelease

@Suite("AutoreleasePoolBadInput")
struct AutoreleasePoolBadInputTests {
    @Test("A token from another thread is refused by name and nothing is released")
    func wrongThread() {
        let log = Log()
        // Thread A pushes and hands the raw token to thread B (through the joined result).
        let (raw, ownerThread, outcome) = onFreshThread { () -> (UInt, UInt, String) in
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(1, log))
            let inner = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(2, log))
            let raw = inner.unsafeRaw
            let owner = inner.thread
            _ = consume inner
            let outcome = onFreshThread { () -> String in
                do throws(AutoreleasePoolError) {
                    try AutoreleasePool.checkedPop(AutoreleasePool.Token(address: raw, thread: owner))
                    return "popped"
                } catch {
                    guard case let .wrongThread(token, pushedOn, poppedOn) = error,
                          token == raw, pushedOn == owner, poppedOn == currentThreadID(), poppedOn != owner
                    else { return "wrong error \(error)" }
                    return error.description
                }
            }
            let releasedMeanwhile = log.ids
            AutoreleasePool.pop(token)
            return (raw, owner, releasedMeanwhile.isEmpty ? outcome : "released \(releasedMeanwhile)")
        }
        #expect(outcome.hasPrefix("autorelease pool token \(hex(raw)) was pushed on thread \(hex(ownerThread)) but popped on thread 0x"))
        #expect(outcome.hasSuffix("; nothing was released"))
        #expect(log.ids == [2, 1])
    }

    @Test("A stale token (its pool already popped) is refused and nothing is released")
    func staleToken() {
        let log = Log()
        let (error, releasedByBadPop) = onFreshThread { () -> (AutoreleasePoolError?, [Int]) in
            let outer = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(1, log))
            let inner = AutoreleasePool.push()
            let raw = inner.unsafeRaw
            AutoreleasePool.pop(inner)
            AutoreleasePool.autorelease(consuming: Tracked(2, log))  // now sits in the stale slot
            let before = log.ids
            var caught: AutoreleasePoolError?
            do throws(AutoreleasePoolError) {
                try AutoreleasePool.checkedPop(AutoreleasePool.Token(unsafeRaw: raw))
            } catch { caught = error }
            let released = log.ids.count - before.count
            AutoreleasePool.pop(outer)
            return (caught, Array(repeating: 0, count: released))
        }
        #expect(releasedByBadPop.isEmpty)
        guard case let .staleToken(token, thread)? = error else {
            Issue.record("expected staleToken, got \(String(describing: error))")
            return
        }
        #expect(error?.description == "autorelease pool token \(hex(token)) on thread \(hex(thread)) is stale: its pool was already popped; nothing was released")
        #expect(log.ids == [2, 1])
    }

    @Test("A forged token is refused without touching its memory", arguments: [UInt(0xDEAD_0000), 0x10, 7, 0xFFFF_FFFF_F000])
    func forgedToken(address: UInt) {
        let log = Log()
        let error = onFreshThread { () -> AutoreleasePoolError? in
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(1, log))
            var caught: AutoreleasePoolError?
            do throws(AutoreleasePoolError) {
                try AutoreleasePool.checkedPop(AutoreleasePool.Token(unsafeRaw: address))
            } catch { caught = error }
            let untouched = log.ids.isEmpty
            AutoreleasePool.pop(token)
            return untouched ? caught : nil
        }
        guard case let .unknownToken(token, _)? = error else {
            Issue.record("expected unknownToken, got \(String(describing: error))")
            return
        }
        #expect(token == address)
        #expect(error?.description.contains("is not a pool of thread 0x") == true)
        #expect(log.ids == [1])
    }

    @Test("A token pointing at an object slot (not a boundary) is refused")
    func objectSlotToken() {
        let error = onFreshThread { () -> AutoreleasePoolError? in
            final class Object {}
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Object())
            let probe = AutoreleasePool.push()
            let objectSlot = probe.address - 8
            AutoreleasePool.pop(probe)
            AutoreleasePool.autorelease(consuming: Object())
            var caught: AutoreleasePoolError?
            do throws(AutoreleasePoolError) {
                try AutoreleasePool.checkedPop(AutoreleasePool.Token(unsafeRaw: objectSlot))
            } catch { caught = error }
            AutoreleasePool.pop(token)
            return caught
        }
        guard case .staleToken? = error else {
            Issue.record("expected staleToken, got \(String(describing: error))")
            return
        }
    }

    @Test("The placeholder token after its pool was popped is stale for the checked pop")
    func stalePlaceholder() {
        let error = onFreshThread { () -> AutoreleasePoolError? in
            let token = AutoreleasePool.push()
            #expect(token.address == 1)
            AutoreleasePool.pop(token)
            do throws(AutoreleasePoolError) {
                try AutoreleasePool.checkedPop(AutoreleasePool.Token(unsafeRaw: 1))
                return nil
            } catch { return error }
        }
        guard case .staleToken(token: 1, thread: _)? = error else {
            Issue.record("expected staleToken(1), got \(String(describing: error))")
            return
        }
    }

    @Test("Unchecked pop of a forged token traps with objc4's text")
    func uncheckedForged() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Object {}
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Object())
            AutoreleasePool.pop(AutoreleasePool.Token(unsafeRaw: 0xDEAD_0000))
            AutoreleasePool.pop(token)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Invalid or prematurely-freed autorelease pool 0xdead0000. Set a breakpoint on objc_autoreleasePoolInvalid to debug."))
        #expect(text.contains("Invalid autorelease pools are a fatal error"))
    }

    @Test("Unchecked pop of another thread's token traps with objc4's text")
    func uncheckedWrongThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Object {}
            final class Box: @unchecked Sendable { var raw: UInt = 0; var thread: UInt = 0 }  // handed over by pthread_join
            let box = Box()
            var thread = pthread_t()
            pthread_create(&thread, nil, { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeUnretainedValue()
                let token = AutoreleasePool.push()
                AutoreleasePool.autorelease(consuming: Object())
                box.raw = token.unsafeRaw
                box.thread = token.thread
                _ = consume token
                return nil
            }, Unmanaged.passUnretained(box).toOpaque())
            pthread_join(thread, nil)
            AutoreleasePool.pop(AutoreleasePool.Token(address: box.raw, thread: box.thread))
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Invalid or prematurely-freed autorelease pool 0x"))
        #expect(text.contains("was pushed on thread 0x"))
        #expect(text.contains("Invalid autorelease pools are a fatal error"))
    }
}
