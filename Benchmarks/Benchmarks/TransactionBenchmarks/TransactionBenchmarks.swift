// Transactions benchmarks (package-benchmark). Each measurement sits beside two baselines in
// the same run: a hand-written dirty list (mark appends a node once, the flush sorts the list
// parents first and calls layout then display on each), and the naive "lay out (and display)
// everything every turn" that a deferred, coalescing commit replaces. Names read
// "<work> · <implementation>".
//
//   mark            Layer.setNeedsLayout() on a clean layer (opens the implicit transaction,
//                   queues it) and on an already-dirty one (coalesced), vs the dirty list's mark
//                   and vs setting a Bool.
//   commit          one commit of N dirty layers (layout + display) in a 4,096-layer tree of
//                   depth 8, N = 16 / 256 / 4096; user callbacks are empty, so time / N is the
//                   pipeline's cost per layer (target ≤ 50 ns, linear in N). Baselines: the
//                   dirty-list flush of the same N nodes; walk and lay out + display the whole tree.
//   linearity       mark every layer of a depth-8 tree of N layers dirty and commit, N = 16 /
//                   256 / 4,096 / 65,536, repeated to 65,536 layers per sample, so each row is a
//                   cost per layer; the 65,536-layer commit is "ours", the smaller ones its peers
//                   (linear: ≈ 1× or below, as a small commit carries the fixed cost per commit).
//   idle check      commitIfNeeded(reason: .beforeWaiting) with nothing to do (target ≤ 20 ns,
//                   0 mallocs), vs an empty dirty-list flush and the naive walk of a 64-layer tree.
import BenchOrder
import Benchmark
import Transactions
#if canImport(Glibc)
import Glibc
#endif

/// How long each benchmark may sample: 1 s (the default), or the seconds in RUNLOOPKIT_BENCH_SECONDS (the
/// short CI subset sets it lower).
let maxSampling: Duration = {
    guard let text = getenv("RUNLOOPKIT_BENCH_SECONDS").map({ String(cString: $0) }),
          let seconds = Double(text), seconds > 0 else { return .seconds(1) }
    return .milliseconds(Int(seconds * 1000))
}()

/// Discards snapshots so the sink costs nothing beyond the snapshot the pipeline builds.
final class DiscardingSink: CommitSink {
    func deliver(_ snapshot: CommitSnapshot) {}
}

/// A tree of `count` layers whose depths run 0...8: layer i hangs under a layer one level up,
/// chosen round-robin, so every level but the root's is equally wide.
func makeDepth8Tree(count: Int) -> (root: Layer, layers: [Layer]) {
    let root = Layer(name: "root")
    var levels: [[Layer]] = [[root]]
    var all = [root]
    let perLevel = max(1, (count - 1) / 8)
    for depth in 1...8 {
        var level: [Layer] = []
        let parents = levels[depth - 1]
        let width = depth == 8 ? count - all.count : perLevel
        for index in 0..<max(0, width) {
            let layer = Layer(name: "d\(depth)-\(index)")
            parents[index % parents.count].addSublayer(layer)
            level.append(layer)
            all.append(layer)
        }
        levels.append(level)
    }
    for layer in all {
        layer.onLayout = { _ in }
        layer.onDisplay = { _, _ in }
    }
    return (root, all)
}

/// The naive baseline: every turn, lay out and display every layer, parents first.
func layOutAndDisplayEverything(_ layer: Layer) {
    layer.onLayout?(layer)
    layer.onDisplay?(layer, layer.bounds)
    for child in layer.sublayers { layOutAndDisplayEverything(child) }
}

/// Spreads `n` dirty layers evenly over the tree.
func pick<Element>(_ n: Int, from layers: [Element]) -> [Element] {
    let stride = max(1, layers.count / n)
    return (0..<n).map { layers[($0 * stride) % layers.count] }
}

/// The hand-written alternative to a transaction: a node with two flags and the callbacks a
/// layer has, marked into a `DirtyList`.
final class DirtyNode {
    let depth: Int
    let bounds: LayerRect
    var needsLayout = false
    var needsDisplay = false
    var onLayout: ((DirtyNode) -> Void)?
    var onDisplay: ((DirtyNode, LayerRect) -> Void)?

    init(depth: Int, bounds: LayerRect) {
        self.depth = depth
        self.bounds = bounds
    }
}

/// A list of the nodes marked since the last flush, each listed once.
struct DirtyList {
    var nodes: [DirtyNode] = []

    init() { nodes.reserveCapacity(4096) }

    mutating func setNeedsLayout(_ node: DirtyNode) {
        if !node.needsLayout && !node.needsDisplay { nodes.append(node) }
        node.needsLayout = true
    }

    mutating func setNeedsDisplay(_ node: DirtyNode) {
        if !node.needsLayout && !node.needsDisplay { nodes.append(node) }
        node.needsDisplay = true
    }

    /// Parents first, then layout before display for each node, as a commit orders them.
    mutating func flush() {
        guard !nodes.isEmpty else { return }
        nodes.sort { $0.depth < $1.depth }
        for node in nodes {
            if node.needsLayout {
                node.needsLayout = false
                node.onLayout?(node)
            }
            if node.needsDisplay {
                node.needsDisplay = false
                node.onDisplay?(node, node.bounds)
            }
        }
        nodes.removeAll(keepingCapacity: true)
    }
}

/// Nodes with the depths and bounds of `layers`, and empty callbacks.
func makeDirtyNodes(like layers: [Layer]) -> [DirtyNode] {
    layers.map { layer in
        let node = DirtyNode(depth: layer.depth, bounds: layer.bounds)
        node.onLayout = { _ in }
        node.onDisplay = { _, _ in }
        return node
    }
}

/// Trees, layers and pipelines built once and reused by every sample, so samples measure only the
/// operation. Benchmarks run on one thread; nothing here is shared across threads.
final class Fixtures {
    nonisolated(unsafe) static var trees: [Int: (root: Layer, layers: [Layer])] = [:]
    nonisolated(unsafe) static var pipeline: CommitPipeline?
    nonisolated(unsafe) static var markLayers: [Layer] = []
    nonisolated(unsafe) static var dirtyNodes: [DirtyNode] = []
    nonisolated(unsafe) static var dirtyList = DirtyList()

    /// Nodes shaped like the 4,096-layer tree's layers.
    static var nodes: [DirtyNode] {
        if dirtyNodes.isEmpty { dirtyNodes = makeDirtyNodes(like: tree(4096).layers) }
        return dirtyNodes
    }

    static func tree(_ count: Int) -> (root: Layer, layers: [Layer]) {
        if let tree = trees[count] { return tree }
        let tree = makeDepth8Tree(count: count)
        trees[count] = tree
        return tree
    }

    /// One pipeline for every benchmark, with a sink that discards snapshots.
    static var sharedPipeline: CommitPipeline {
        if let pipeline { return pipeline }
        let made = CommitPipeline()
        made.sink = DiscardingSink()
        pipeline = made
        return made
    }

    static func layers(_ count: Int) -> [Layer] {
        while markLayers.count < count { markLayers.append(Layer(name: "m\(markLayers.count)")) }
        return markLayers
    }
}

/// The implementation names of this target.
let ours = "Transactions"
/// The name `ratios.py` treats as "ours" in the dirty list's linearity reference work.
let dirtyListOnAllNodes = "hand-written dirty list on 65536 nodes"
let dirtyList = "hand-written dirty list"

let benchmarks: @Sendable () -> Void = {
    let metrics: [BenchmarkMetric] = [.wallClock, .mallocCountTotal]

    // MARK: mark cost

    let firstMark = "mark: setNeedsLayout, first mark of a clean layer"
    Benchmark("\(firstMark) · \(ours)", configuration: .init(metrics: metrics, scalingFactor: .kilo, maxDuration: maxSampling)) { benchmark in
        let pipeline = Fixtures.sharedPipeline
        pipeline.asCurrent {
            let layers = Fixtures.layers(benchmark.scaledIterations.count)
            benchmark.startMeasurement()
            for index in benchmark.scaledIterations { layers[index].setNeedsLayout() }
            benchmark.stopMeasurement()
            pipeline.commitIfNeeded(reason: .beforeWaiting)   // clean again for the next sample
        }
    }

    Benchmark("\(firstMark) · \(dirtyList)", configuration: .init(metrics: metrics, scalingFactor: .kilo, maxDuration: maxSampling)) { benchmark in
        let nodes = Fixtures.nodes
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations { Fixtures.dirtyList.setNeedsLayout(nodes[index]) }
        benchmark.stopMeasurement()
        Fixtures.dirtyList.flush()
    }

    Benchmark("\(firstMark) · set a Bool (naive)", configuration: .init(metrics: metrics, scalingFactor: .kilo, maxDuration: maxSampling)) { benchmark in
        var flags = [Bool](repeating: false, count: benchmark.scaledIterations.count)
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations { flags[index] = true }
        benchmark.stopMeasurement()
        blackHole(flags)
    }

    let coalescedMark = "mark: setNeedsLayout, already dirty (coalesced)"
    Benchmark("\(coalescedMark) · \(ours)", configuration: .init(metrics: metrics, scalingFactor: .kilo, maxDuration: maxSampling)) { benchmark in
        let pipeline = Fixtures.sharedPipeline
        pipeline.asCurrent {
            let layer = Fixtures.layers(1)[0]
            layer.setNeedsLayout()
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { layer.setNeedsLayout() }
            benchmark.stopMeasurement()
            pipeline.commitIfNeeded(reason: .beforeWaiting)
        }
    }

    Benchmark("\(coalescedMark) · \(dirtyList)", configuration: .init(metrics: metrics, scalingFactor: .kilo, maxDuration: maxSampling)) { benchmark in
        let node = Fixtures.nodes[0]
        Fixtures.dirtyList.setNeedsLayout(node)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { Fixtures.dirtyList.setNeedsLayout(node) }
        benchmark.stopMeasurement()
        Fixtures.dirtyList.flush()
    }

    // MARK: commit of N dirty layers, depth-8 tree of 4,096 layers (one commit per sample)

    for dirtyCount in [16, 256, 4096] {
        let commit = "commit: \(dirtyCount) dirty of 4096 layers, depth 8 (per commit)"
        Benchmark("\(commit) · \(ours)", configuration: .init(metrics: metrics, scalingFactor: .one, maxDuration: maxSampling)) { benchmark in
            let pipeline = Fixtures.sharedPipeline
            pipeline.asCurrent {
                let dirty = pick(dirtyCount, from: Fixtures.tree(4096).layers)
                for layer in dirty {
                    layer.setNeedsLayout()
                    layer.setNeedsDisplay()
                }
                benchmark.startMeasurement()
                pipeline.commitIfNeeded(reason: .beforeWaiting)
                benchmark.stopMeasurement()
            }
        }

        Benchmark("\(commit) · \(dirtyList) flush", configuration: .init(metrics: metrics, scalingFactor: .one, maxDuration: maxSampling)) { benchmark in
            for node in pick(dirtyCount, from: Fixtures.nodes) {
                Fixtures.dirtyList.setNeedsLayout(node)
                Fixtures.dirtyList.setNeedsDisplay(node)
            }
            benchmark.startMeasurement()
            Fixtures.dirtyList.flush()
            benchmark.stopMeasurement()
        }

        Benchmark("\(commit) · lay out + display all 4096 layers (naive)",
                  configuration: .init(metrics: metrics, scalingFactor: .one, maxDuration: maxSampling)) { benchmark in
            let root = Fixtures.tree(4096).root
            benchmark.startMeasurement()
            layOutAndDisplayEverything(root)
            benchmark.stopMeasurement()
        }
    }

    // MARK: linearity: per-layer cost of commits of 16 … 65,536 layers

    let layersPerSample = 65_536
    let linear = "mark + commit, every layer dirty, depth-8 tree (per 65536 layers)"
    for layerCount in [65_536, 4096, 256, 16] {
        let name = layerCount == layersPerSample ? ours : "\(ours), \(layerCount)-layer commits"
        Benchmark("\(linear) · \(name)", configuration: .init(metrics: metrics, scalingFactor: .one, maxDuration: maxSampling)) { benchmark in
            let pipeline = Fixtures.sharedPipeline
            pipeline.asCurrent {
                let layers = Fixtures.tree(layerCount).layers
                benchmark.startMeasurement()
                for _ in 0..<(layersPerSample / layerCount) {
                    for layer in layers {
                        layer.setNeedsLayout()
                        layer.setNeedsDisplay()
                    }
                    pipeline.commitIfNeeded(reason: .beforeWaiting)
                }
                benchmark.stopMeasurement()
            }
        }
    }

    // The same sizes on the hand-written dirty list, as a reference work of its own: whatever its
    // per-node cost gains from 4,096 to 65,536 nodes is the memory hierarchy, not bookkeeping.
    let linearList = "mark + flush, every node dirty, hand-written dirty list, depth-8 tree (per 65536 nodes)"
    for nodeCount in [65_536, 4096, 256, 16] {
        let name = nodeCount == layersPerSample ? dirtyListOnAllNodes : "\(dirtyList), \(nodeCount)-node flushes"
        Benchmark("\(linearList) · \(name)", configuration: .init(metrics: metrics, scalingFactor: .one, maxDuration: maxSampling)) { benchmark in
            let nodes = makeDirtyNodes(like: Fixtures.tree(nodeCount).layers)
            var list = DirtyList()
            benchmark.startMeasurement()
            for _ in 0..<(layersPerSample / nodeCount) {
                for node in nodes {
                    list.setNeedsLayout(node)
                    list.setNeedsDisplay(node)
                }
                list.flush()
            }
            benchmark.stopMeasurement()
        }
    }

    // MARK: idle before-waiting check

    let idle = "idle check, nothing dirty"
    Benchmark("\(idle) · \(ours)", configuration: .init(metrics: metrics, scalingFactor: .kilo, maxDuration: maxSampling)) { benchmark in
        let pipeline = Fixtures.sharedPipeline
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { pipeline.commitIfNeeded(reason: .beforeWaiting) }
        benchmark.stopMeasurement()
    }

    Benchmark("\(idle) · \(dirtyList) flush", configuration: .init(metrics: metrics, scalingFactor: .kilo, maxDuration: maxSampling)) { benchmark in
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { Fixtures.dirtyList.flush() }
        benchmark.stopMeasurement()
    }

    Benchmark("\(idle) · lay out + display a 64-layer tree (naive)",
              configuration: .init(metrics: metrics, scalingFactor: .kilo, maxDuration: maxSampling)) { benchmark in
        let root = Fixtures.tree(64).root
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { layOutAndDisplayEverything(root) }
        benchmark.stopMeasurement()
    }
    applyRunOrder()
}
