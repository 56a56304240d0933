import Testing
@testable import Transactions

@Suite("LayerTree")
struct LayerTreeTests {
    @Test func depthFollowsTheTreeThroughMoves() {
        let root = Layer(name: "root"), a = Layer(name: "a"), b = Layer(name: "b"), c = Layer(name: "c")
        root.addSublayer(a)
        a.addSublayer(b)
        b.addSublayer(c)
        #expect([root.depth, a.depth, b.depth, c.depth] == [0, 1, 2, 3])
        root.addSublayer(b)                          // moves b (and c) up
        #expect(a.sublayers.isEmpty)
        #expect(root.sublayers.map(\.name) == ["a", "b"])
        #expect([b.depth, c.depth] == [1, 2])
        #expect(b.superlayer === root)
        b.removeFromSuperlayer()
        #expect(b.superlayer == nil && b.depth == 0 && c.depth == 1)
        root.insertSublayer(b, at: 0)
        #expect(root.sublayers.map(\.name) == ["b", "a"])
        #expect(c.rootLayer === root)
    }

    @Test func dirtyRectsAreUnioned() {
        let h = Harness()
        h.run {
            var drawn: [LayerRect] = []
            let v = h.layer("v", display: { _, rect in drawn.append(rect) })
            v.setNeedsDisplay(in: LayerRect(x: 0, y: 0, width: 10, height: 10))
            v.setNeedsDisplay(in: LayerRect(x: 50, y: 40, width: 10, height: 10))
            v.setNeedsDisplay(in: .zero)             // empty: contributes nothing
            #expect(v.needsDisplay)
            #expect(v.dirtyRect == LayerRect(x: 0, y: 0, width: 60, height: 50))
            LayerTransaction.flush()
            #expect(drawn == [LayerRect(x: 0, y: 0, width: 60, height: 50)])
            #expect(!v.needsDisplay && v.dirtyRect == nil)
            #expect(h.sink.snapshots.last?.displayed.map(\.dirtyRect) == drawn)
            v.setNeedsDisplay()                      // whole bounds
            LayerTransaction.flush()
            #expect(drawn.last == v.bounds)
        }
    }

    @Test func layoutIfNeededStartsAtTheHighestAncestorNeedingLayout() {
        let h = Harness()
        h.run {
            let top = h.layer("top"), middle = h.layer("middle"), leaf = h.layer("leaf"), sibling = h.layer("sibling")
            top.addSublayer(middle)
            middle.addSublayer(leaf)
            top.addSublayer(sibling)
            leaf.setNeedsLayout()
            top.setNeedsLayout()                     // middle is clean in between
            sibling.setNeedsLayout()
            leaf.layoutIfNeeded()
            #expect(h.log.take() == ["L(top)", "L(leaf)", "L(sibling)"])
            #expect(!top.needsLayout && !leaf.needsLayout && !sibling.needsLayout)
            leaf.layoutIfNeeded()                    // nothing pending: no callouts
            #expect(h.log.take() == [])
            LayerTransaction.flush()                      // the commit finds nothing left to lay out
            #expect(h.log.take() == ["C"])
            #expect(h.sink.snapshots.last?.laidOut == [])
        }
    }

    @Test func displayIfNeededDisplaysOnlyThatLayerNow() {
        let h = Harness()
        h.run {
            let a = h.layer("a"), b = h.layer("b")
            a.setNeedsDisplay()
            b.setNeedsDisplay()
            a.displayIfNeeded()
            #expect(h.log.take() == ["D(a)"])
            a.displayIfNeeded()
            #expect(h.log.take() == [])
            LayerTransaction.flush()
            #expect(h.log.take() == ["D(b)", "C"])
        }
    }

    @Test func displayRunsInTreeOrder() {
        let h = Harness()
        h.run {
            // root ─ a ─ a1
            //      └ b ─ b1
            let root = h.layer("root"), a = h.layer("a"), a1 = h.layer("a1"), b = h.layer("b"), b1 = h.layer("b1")
            root.addSublayer(a)
            root.addSublayer(b)
            a.addSublayer(a1)
            b.addSublayer(b1)
            let other = h.layer("otherTree")         // created after root: its tree comes later
            for layer in [b1, other, a1, b, root, a] { layer.setNeedsDisplay() }
            LayerTransaction.flush()
            #expect(h.log.take() == ["D(root)", "D(a)", "D(a1)", "D(b)", "D(b1)", "D(otherTree)", "C"])
        }
    }

    @Test func delegateIsUsedWhenNoClosureIsSet() {
        final class Recorder: LayerDelegate {
            var calls: [String] = []
            func layout(_ layer: Layer) { calls.append("layout \(layer.name)") }
            func display(_ layer: Layer, dirtyRect: LayerRect) { calls.append("display \(layer.name) \(dirtyRect)") }
        }
        let h = Harness()
        h.run {
            let recorder = Recorder()
            let v = Layer(name: "v", bounds: LayerRect(x: 0, y: 0, width: 2, height: 3))
            v.delegate = recorder
            v.setNeedsLayout()
            v.setNeedsDisplay()
            LayerTransaction.flush()
            #expect(recorder.calls == ["layout v", "display v (0.0, 0.0, 2.0, 3.0)"])
            v.onLayout = { _ in recorder.calls.append("closure") }
            v.setNeedsLayout()
            LayerTransaction.flush()
            #expect(recorder.calls.last == "closure")
        }
    }

    @Test func rectUnion() {
        let a = LayerRect(x: 0, y: 0, width: 10, height: 10)
        #expect(a.union(LayerRect(x: 20, y: 5, width: 5, height: 5)) == LayerRect(x: 0, y: 0, width: 25, height: 10))
        #expect(LayerRect.zero.union(a) == a)
        #expect(a.union(LayerRect(x: 3, y: 3, width: -1, height: 4)) == a)
        #expect(LayerRect(x: 1, y: 1, width: 0, height: 5).isEmpty)
    }

    /// Bad input: making a layer its own ancestor stops with a message naming both layers.
    @Test func cycleIsAClearPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            let parent = Layer(name: "parent"), child = Layer(name: "child")
            parent.addSublayer(child)
            child.addSublayer(parent)
        }
    }
}
