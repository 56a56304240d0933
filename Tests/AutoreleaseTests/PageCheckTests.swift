// Page checks: a page whose magic was overwritten is refused by name on every pop path and
// reported on the print path; a token into a page that is not one of the thread's is unknown.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RunLoopDiagnostics
import Testing
@testable import Autorelease

/// Overwrites the 32-bit magic word `index` (0...3) of the page holding `address` and returns
/// a closure that puts the old value back.
func corruptMagic(ofPageAt address: UInt, word index: Int = 0) -> () -> Void {
    let page = UnsafeMutableRawPointer(bitPattern: address & ~UInt(4095))!
    let saved = page.load(fromByteOffset: 4 * index, as: UInt32.self)
    page.storeBytes(of: 0xDEAD_BEEF, toByteOffset: 4 * index, as: UInt32.self)
    return { page.storeBytes(of: saved, toByteOffset: 4 * index, as: UInt32.self) }
}

@Suite("AutoreleasePoolPageChecks")
struct AutoreleasePoolPageCheckTests {
    @Test("checkedPop refuses a token whose page lost its magic, releasing nothing")
    func corruptedTokenPage() {
        let log = Log()
        let (error, page, releasedWhileCorrupt) = onFreshThread { () -> (AutoreleasePoolError?, UInt, [Int]) in
            primePool()   // a real page, so the token is a slot and not the placeholder
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(1, log))
            let raw = token.unsafeRaw
            let restore = corruptMagic(ofPageAt: raw)
            var caught: AutoreleasePoolError?
            do throws(AutoreleasePoolError) {
                try AutoreleasePool.checkedPop(AutoreleasePool.Token(unsafeRaw: raw))
            } catch { caught = error }
            let released = log.ids
            restore()
            AutoreleasePool.pop(token)
            return (caught, raw & ~UInt(4095), released)
        }
        #expect(releasedWhileCorrupt.isEmpty)
        #expect(log.ids == [1])
        guard case let .corruptedPage(corrupted, token, thread)? = error else {
            Issue.record("expected corruptedPage, got \(String(describing: error))")
            return
        }
        #expect(corrupted == page)
        #expect(token == page + 56)
        #expect(error?.description == "autorelease pool page \(hex(page)) of thread \(hex(thread)) is corrupted (its magic was overwritten), found while popping token \(hex(token)); nothing was released")
    }

    @Test("A corrupted colder page is found on the way to the token's page")
    func corruptedAncestor() {
        let log = Log()
        let (error, coldPage, innerPopped) = onFreshThread { () -> (AutoreleasePoolError?, UInt, Bool) in
            primePool()
            let outer = AutoreleasePool.push()
            for id in 0..<600 { AutoreleasePool.autorelease(consuming: Tracked(id, log)) }
            let inner = AutoreleasePool.push()
            let outerRaw = outer.unsafeRaw
            let restore = corruptMagic(ofPageAt: outerRaw)
            // The inner pool sits on the intact hot page: it pops without looking further.
            let innerPopped = (try? AutoreleasePool.checkedPop(inner)) != nil
            var caught: AutoreleasePoolError?
            do throws(AutoreleasePoolError) {
                try AutoreleasePool.checkedPop(AutoreleasePool.Token(unsafeRaw: outerRaw))
            } catch { caught = error }
            let untouched = log.ids.isEmpty
            restore()
            AutoreleasePool.pop(outer)
            return (untouched ? caught : nil, outerRaw & ~UInt(4095), innerPopped)
        }
        #expect(innerPopped)
        #expect(log.ids == Array((0..<600).reversed()))
        guard case let .corruptedPage(page, _, _)? = error else {
            Issue.record("expected corruptedPage, got \(String(describing: error))")
            return
        }
        #expect(page == coldPage)
    }

    #if DEBUG
    @Test("Debug builds check all four magic words, not only the first")
    func fullCheckInDebug() {
        let error = onFreshThread { () -> AutoreleasePoolError? in
            primePool()
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(1, Log()))
            let raw = token.unsafeRaw
            let restore = corruptMagic(ofPageAt: raw, word: 2)
            var caught: AutoreleasePoolError?
            do throws(AutoreleasePoolError) {
                try AutoreleasePool.checkedPop(AutoreleasePool.Token(unsafeRaw: raw))
            } catch { caught = error }
            restore()
            AutoreleasePool.pop(token)
            return caught
        }
        guard case .corruptedPage? = error else {
            Issue.record("expected corruptedPage, got \(String(describing: error))")
            return
        }
    }
    #endif

    @Test("The debug print reports a corrupted page and stops there instead of following it")
    func corruptedPageInDebugPrint() {
        let recorder = DiagnosticsRecorder(capturing: ["pool.page-corrupted"])
        let (lines, coldPage) = onFreshThread { () -> ([String], UInt) in
            final class Object {}
            primePool()
            let outer = AutoreleasePool.push()
            for _ in 0..<600 { AutoreleasePool.autorelease(consuming: Object()) }
            let raw = outer.unsafeRaw
            let restore = corruptMagic(ofPageAt: raw)
            let lines = AutoreleasePool.debugLines()
            restore()
            AutoreleasePool.pop(outer)
            return (lines, raw & ~UInt(4095))
        }
        recorder.stop()
        #expect(lines.contains("[\(hex(coldPage))]  ................  PAGE (corrupted)"))
        #expect(lines.last == "##############")
        let reports = recorder.diagnostics(withID: "pool.page-corrupted", item: hex(coldPage))
        #expect(reports.count == 1)
        #expect(reports.first?.severity == .error)
        #expect(reports.first?.message.hasPrefix("autorelease pool page \(hex(coldPage)) corrupted: magic 0xdeadbeef 0x4f545541 0x454c4552 0x21455341, should be 0xa1a1a1a1 0x4f545541 0x454c4552 0x21455341; pthread 0x") == true)
    }

    @Test("An unchecked pop through a corrupted page reports pool.page-corrupted and traps")
    func uncheckedCorrupted() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Object {}
            primePool()
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Object())
            _ = corruptMagic(ofPageAt: token.address)
            AutoreleasePool.pop(token)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("[fault] pool.page-corrupted (0x"))
        #expect(text.contains("corrupted: magic 0xdeadbeef 0x4f545541"))
        #expect(!text.contains("pool.bad-pop"))
    }

    @Test("A forged token into a page-shaped block that is not the thread's is unknown; the block is untouched")
    func forgedPage() {
        let log = Log()
        let (error, nextBefore, nextAfter) = onFreshThread { () -> (AutoreleasePoolError?, UInt, UInt) in
            // A block that looks like a page of this thread: magic, next, thread.
            var memory: UnsafeMutableRawPointer?
            guard posix_memalign(&memory, 4096, 4096) == 0, let fake = memory else { return (nil, 0, 0) }
            defer { free(fake) }
            for (offset, word) in [0xA1A1_A1A1, 0x4F54_5541, 0x454C_4552, 0x2145_5341].enumerated() {
                fake.storeBytes(of: UInt32(word), toByteOffset: 4 * offset, as: UInt32.self)
            }
            let address = UInt(bitPattern: fake)
            fake.storeBytes(of: address + 64, toByteOffset: 16, as: UInt.self)          // next
            fake.storeBytes(of: currentThreadID(), toByteOffset: 24, as: UInt.self)     // thread
            fake.storeBytes(of: UInt(0), toByteOffset: 56, as: UInt.self)               // a boundary
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Tracked(1, log))
            var caught: AutoreleasePoolError?
            do throws(AutoreleasePoolError) {
                try AutoreleasePool.checkedPop(AutoreleasePool.Token(unsafeRaw: address + 56))
            } catch { caught = error }
            let after = fake.load(fromByteOffset: 16, as: UInt.self)
            let untouched = log.ids.isEmpty
            AutoreleasePool.pop(token)
            return (untouched ? caught : nil, address + 64, after)
        }
        guard case .unknownToken? = error else {
            Issue.record("expected unknownToken, got \(String(describing: error))")
            return
        }
        #expect(nextAfter == nextBefore)
        #expect(log.ids == [1])
    }

    @Test("An unchecked pop of a forged token reports pool.bad-pop with objc4's text and traps")
    func uncheckedForgedReportsBadPop() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Object {}
            let token = AutoreleasePool.push()
            AutoreleasePool.autorelease(consuming: Object())
            AutoreleasePool.pop(AutoreleasePool.Token(unsafeRaw: 0xBAD0_0038))
            AutoreleasePool.pop(token)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("[fault] pool.bad-pop (0xbad00038): Invalid or prematurely-freed autorelease pool 0xbad00038. Set a breakpoint on objc_autoreleasePoolInvalid to debug. (autorelease pool token 0xbad00038 is not a pool of thread 0x"))
        // The first two lines are exactly the ones Docs/Rules.md quotes under AP5 (a bad pop prints
        // objc4's sentence as a fault diagnostic, then stops with a fatal error).
        let lines = text.split(separator: "\n").prefix(2).map(String.init)
        let quoted = try badPopLinesQuotedInRules()
        #expect(lines.count == 2 && quoted.count == 2, "\(lines) / \(quoted)")
        for (line, template) in zip(lines, quoted) {
            #expect(line.wholeMatch(of: Self.pattern(template)) != nil, "printed: \(line)\nquoted:  \(template)")
        }
    }

    /// The fenced block under the anchor of AP5 (a bad pop's two lines) in Docs/Rules.md.
    private func badPopLinesQuotedInRules(filePath: String = #filePath) throws -> [String] {
        let root = filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
        let rules = try #require(readFile(root + "/Docs/Rules.md"))
        let entry = try #require(rules.split(separator: "<a id=\"AP5\"></a>").dropFirst().first)
        let block = try #require(entry.split(separator: "```").dropFirst().first)
        return block.split(separator: "\n").dropFirst().map(String.init)   // after "text"
    }

    /// A quoted line as a pattern: TOKEN, REASON and LINE stand for what varies from run to run.
    private static func pattern(_ template: String) -> Regex<AnyRegexOutput> {
        var escaped = ""
        for character in template {
            if "\\^$.|?*+()[]{}".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        for (word, part) in [("TOKEN", "0x[0-9a-f]+"), ("REASON", ".+"), ("LINE", "[0-9]+")] {
            escaped = escaped.split(separator: word, omittingEmptySubsequences: false).joined(separator: part)
        }
        return try! Regex(escaped)
    }

    private func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return nil }
            if count == 0 { return String(decoding: bytes, as: UTF8.self) }
            bytes += chunk[0..<count]
        }
    }
}
