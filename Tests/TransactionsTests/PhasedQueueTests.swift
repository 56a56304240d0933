import Testing
import Transactions

/// The generic queue on its own, with a service example that has nothing to do with UI.
@Suite("PhasedQueue")
struct PhasedQueueTests {
    /// The documented example: a report service recomputes aggregates, then writes each dirty
    /// output file once, all deferred to one drain per loop turn.
    final class ReportService {
        enum Work: PhasedQueueKey { case recompute(String), writeOut(String) }
        static let recompute = 0, writeOut = 1
        let queue = PhasedQueue<Work>(phases: [
            .init("recompute"),                                    // nextRound(4), depth order
            .init("write out", reentrancy: .nextDrain, order: .enqueueOrder),
        ])
        var totals: [String: Int] = [:]
        var pendingDeltas: [String: [Int]] = [:]
        var written: [String] = []
        var trace: [String] = []

        /// Any number of calls per turn: one recompute per account, one write per file.
        func record(_ delta: Int, account: String) {
            pendingDeltas[account, default: []].append(delta)
            queue.enqueue(.recompute(account), phase: Self.recompute, depth: account == "all" ? 0 : 1)
        }

        /// Called once per loop turn (e.g. from a before-waiting observer).
        func turn() {
            queue.drain { phase, work in
                switch work {
                case let .recompute(account):
                    trace.append("recompute \(account)")
                    totals[account, default: 0] += pendingDeltas.removeValue(forKey: account)?.reduce(0, +) ?? 0
                    if account != "all" {
                        // A derived aggregate, recomputed in the same drain (next round).
                        record(0, account: "all")
                        totals["all"] = totals.filter { $0.key != "all" }.values.reduce(0, +)
                    }
                    queue.enqueue(.writeOut("\(account).json"), phase: Self.writeOut)
                case let .writeOut(file):
                    trace.append("write \(file)")
                    written.append(file)
                }
            }
        }
    }

    @Test func serviceExampleRecomputesThenWritesEachFileOnce() {
        let service = ReportService()
        service.record(5, account: "alice")
        service.record(7, account: "bob")
        service.record(1, account: "alice")               // coalesced with alice's pending recompute
        #expect(service.queue.count == 2)
        service.turn()
        #expect(service.trace == ["recompute alice", "recompute bob", "recompute all",
                                  "write alice.json", "write bob.json", "write all.json"])
        #expect(service.totals == ["alice": 6, "bob": 7, "all": 13])
        #expect(service.queue.isEmpty)
        service.turn()
        #expect(service.trace.count == 6)                 // idle drain: nothing
    }

    @Test func phasesRunInDeclaredOrderAndDepthOrderWithinAPhase() {
        let queue = PhasedQueue<String>(phases: [.init("first"), .init("second")])
        queue.enqueue("second-deep", phase: 1, depth: 3)
        queue.enqueue("first-deep", phase: 0, depth: 5)
        queue.enqueue("first-shallow", phase: 0, depth: 1)
        queue.enqueue("first-shallow-later", phase: 0, depth: 1)
        queue.enqueue("second-shallow", phase: 1, depth: 0)
        var order: [String] = []
        queue.drain { _, key in order.append(key) }
        #expect(order == ["first-shallow", "first-shallow-later", "first-deep", "second-shallow", "second-deep"])
    }

    @Test func reentrancyRules() {
        let queue = PhasedQueue<String>(phases: [
            .init("a"), .init("b", reentrancy: .nextDrain), .init("c"),
        ])
        var order: [String] = []
        queue.enqueue("a1", phase: 0)
        queue.enqueue("b1", phase: 1)
        queue.drain { phase, key in
            order.append(key)
            switch key {
            case "a1":
                queue.enqueue("a2", phase: 0)   // running phase, nextRound → this drain, round 2
                queue.enqueue("c1", phase: 2)   // later phase → this drain
            case "b1":
                queue.enqueue("b2", phase: 1)   // running phase, nextDrain → next drain
                queue.enqueue("a3", phase: 0)   // earlier phase → next drain
                #expect(!queue.willRunInThisDrain(phase: 0))
                #expect(queue.willRunInThisDrain(phase: 2))
            default: break
            }
        }
        #expect(order == ["a1", "a2", "b1", "c1"])
        #expect(queue.count == 2)
        order.removeAll()
        queue.drain { _, key in order.append(key) }
        #expect(order == ["a3", "b2"])
    }

    @Test func noDoubleVisitWithinARoundAndCapLeavesTheRest() {
        let queue = PhasedQueue<String>(phases: [.init("only", reentrancy: .nextRound(maxRounds: 3))])
        var order: [String] = []
        queue.enqueue("parent", phase: 0, depth: 0)
        queue.enqueue("child", phase: 0, depth: 1)
        queue.enqueue("spinner", phase: 0, depth: 2)
        let reports = queue.drain { _, key in
            order.append(key)
            if key == "parent" { #expect(!queue.enqueue("child", phase: 0)) }   // still waiting: coalesced
            if key == "spinner" { queue.enqueue("spinner", phase: 0, depth: 2) }
        }
        #expect(order == ["parent", "child", "spinner", "spinner", "spinner"])
        #expect(reports[0].rounds == 3)
        #expect(reports[0].performed == 5)
        #expect(reports[0].leftover == ["spinner"])
        #expect(queue.contains("spinner", phase: 0))
    }

    @Test func removeAndCustomOrder() {
        let queue = PhasedQueue<Int>(phases: [.init("desc", order: .custom { $0 > $1 })])
        for value in [3, 9, 1, 7] { queue.enqueue(value, phase: 0) }
        #expect(queue.remove(9, phase: 0))
        #expect(!queue.remove(9, phase: 0))
        var order: [Int] = []
        queue.drain { _, key in order.append(key) }
        #expect(order == [7, 3, 1])
        #expect(queue.isEmpty)
    }

    @Test func stepwiseDrainMatchesDrain() {
        let queue = PhasedQueue<String>(phases: [.init("x"), .init("y")])
        queue.enqueue("y1", phase: 1)
        queue.enqueue("x1", phase: 0)
        var order: [String] = []
        queue.beginDrain()
        #expect(queue.isDraining)
        queue.runPhase(0) { _, key in order.append(key) }
        order.append("-- host step between phases --")
        queue.runPhase(1) { _, key in order.append(key) }
        queue.endDrain()
        #expect(!queue.isDraining)
        #expect(order == ["x1", "-- host step between phases --", "y1"])
    }

    /// A key that keeps its own membership (a bit per phase in a shared flag array, as the layer
    /// pipeline keeps one in each layer): the queue asks it instead of hashing, coalesces through
    /// it, and clears every flag it set, including on `removeAll()`.
    final class NodeFlags {
        var bits: [UInt8]
        var inserts = 0, removes = 0
        init(count: Int) { bits = Array(repeating: 0, count: count) }
    }

    struct NodeKey: PhasedQueueKey {
        typealias Membership = NodeMembership
        let index: Int
        let flags: NodeFlags
        static func == (a: NodeKey, b: NodeKey) -> Bool { a.index == b.index }
        func hash(into hasher: inout Hasher) { hasher.combine(index) }
    }

    struct NodeMembership: PhaseMembership {
        func contains(_ key: NodeKey, phase: Int) -> Bool { key.flags.bits[key.index] & (1 << phase) != 0 }
        mutating func insert(_ key: NodeKey, phase: Int) -> Bool {
            if contains(key, phase: phase) { return false }
            key.flags.bits[key.index] |= 1 << phase
            key.flags.inserts += 1
            return true
        }
        mutating func remove(_ key: NodeKey, phase: Int) -> Bool {
            guard contains(key, phase: phase) else { return false }
            key.flags.bits[key.index] &= ~(1 << phase)
            key.flags.removes += 1
            return true
        }
    }

    @Test func keysCanKeepTheirOwnMembership() {
        let flags = NodeFlags(count: 4)
        let node = { (index: Int) in NodeKey(index: index, flags: flags) }
        let queue = PhasedQueue<NodeKey>(phases: [.init("layout"), .init("display", reentrancy: .nextDrain)])
        #expect(queue.enqueue(node(2), phase: 0, depth: 2))
        #expect(!queue.enqueue(node(2), phase: 0, depth: 2))          // coalesced by the key's own bit
        #expect(queue.enqueue(node(1), phase: 0, depth: 1))
        #expect(queue.enqueue(node(2), phase: 1))
        #expect(flags.bits == [0, 0b01, 0b11, 0])
        #expect(queue.contains(node(2), phase: 1) && !queue.contains(node(1), phase: 1))
        var order: [String] = []
        queue.drain { phase, key in
            order.append("\(phase):\(key.index)")
            if key.index == 1 { queue.enqueue(node(3), phase: 1) }   // later phase: this drain
        }
        #expect(order == ["0:1", "0:2", "1:2", "1:3"])
        #expect(flags.bits == [0, 0, 0, 0])
        #expect(queue.isEmpty)
        // removeAll() clears the flags of everything still waiting, key by key.
        queue.enqueue(node(0), phase: 0)
        queue.enqueue(node(0), phase: 1)
        queue.enqueue(node(3), phase: 1)
        queue.removeAll()
        #expect(flags.bits == [0, 0, 0, 0])
        #expect(flags.inserts == flags.removes)
        #expect(queue.isEmpty)
        #expect(queue.enqueue(node(0), phase: 0))                     // and the queue works on
    }

    /// The default membership hashes the keys; `HashedPhaseMembership` on its own.
    @Test func hashedMembershipReportsChanges() {
        var members = HashedPhaseMembership<String>()
        let first = members.insert("a", phase: 0), again = members.insert("a", phase: 0)
        #expect(first && !again)
        #expect(members.contains("a", phase: 0))
        let removed = members.remove("a", phase: 0), removedAgain = members.remove("a", phase: 0)
        #expect(removed && !removedAgain)
        #expect(!members.contains("a", phase: 0))
    }

    /// Bad input: an unknown phase index stops with a message naming the valid range.
    @Test func unknownPhaseIsAClearPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            let queue = PhasedQueue<String>(phases: [.init("only")])
            queue.enqueue("x", phase: 3)
        }
    }
}
