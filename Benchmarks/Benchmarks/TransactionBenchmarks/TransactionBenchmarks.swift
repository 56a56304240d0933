// Transactions benchmarks (package-benchmark). Each measurement sits beside a naive baseline in
// the same run: "lay out (and display) everything every turn", the strategy a deferred,
// coalescing commit replaces.
//
//   mark            Layer.setNeedsLayout() on a clean layer (opens the implicit transaction,
//                   queues it) and on an already-dirty one (coalesced), vs setting a Bool.
//   commit          one commit of N dirty layers (layout + display) in a 4,096-layer tree of
//                   depth 8, N = 16 / 256 / 4096; user callbacks are empty, so time / N is the
//                   pipeline's cost per layer (target ≤ 50 ns, linear in N). Baseline: walk and
//                   lay out + display the whole tree.
//   idle check      commitIfNeeded(reason: .beforeWaiting) with nothing to do (target ≤ 20 ns,
//                   0 mallocs), vs the naive walk of a 64-layer tree every turn.
import Benchmark
import Transactions

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
func pick(_ n: Int, from layers: [Layer]) -> [Layer] {
    let stride = max(1, layers.count / n)
    return (0..<n).map { layers[($0 * stride) % layers.count] }
}

/// Trees, layers and pipelines built once and reused by every sample, so samples measure only the
/// operation. Benchmarks run on one thread; nothing here is shared across threads.
final class Fixtures {
    nonisolated(unsafe) static var trees: [Int: (root: Layer, layers: [Layer])] = [:]
    nonisolated(unsafe) static var pipeline: CommitPipeline?
    nonisolated(unsafe) static var markLayers: [Layer] = []

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

let benchmarks: @Sendable () -> Void = {
    let metrics: [BenchmarkMetric] = [.wallClock, .mallocCountTotal]

    // MARK: mark cost

    Benchmark("Transactions mark: setNeedsLayout, first mark of a clean layer",
              configuration: .init(metrics: metrics, scalingFactor: .kilo)) { benchmark in
        let pipeline = Fixtures.sharedPipeline
        pipeline.asCurrent {
            let layers = Fixtures.layers(benchmark.scaledIterations.count)
            benchmark.startMeasurement()
            for index in benchmark.scaledIterations { layers[index].setNeedsLayout() }
            benchmark.stopMeasurement()
            pipeline.commitIfNeeded(reason: .beforeWaiting)   // clean again for the next sample
        }
    }

    Benchmark("Transactions mark: setNeedsLayout, coalesced (already dirty)",
              configuration: .init(metrics: metrics, scalingFactor: .kilo)) { benchmark in
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

    Benchmark("Naive mark baseline: set a Bool",
              configuration: .init(metrics: metrics, scalingFactor: .kilo)) { benchmark in
        var flags = [Bool](repeating: false, count: benchmark.scaledIterations.count)
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations { flags[index] = true }
        benchmark.stopMeasurement()
        blackHole(flags)
    }

    // MARK: commit of N dirty layers, depth-8 tree of 4,096 layers (one commit per sample)

    for dirtyCount in [16, 256, 4096] {
        Benchmark("Transactions commit: \(dirtyCount) dirty of 4096 layers, depth 8 (per commit)",
                  configuration: .init(metrics: metrics, scalingFactor: .one)) { benchmark in
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
    }

    Benchmark("Naive commit baseline: lay out + display all 4096 layers, depth 8 (per turn)",
              configuration: .init(metrics: metrics, scalingFactor: .one)) { benchmark in
        let root = Fixtures.tree(4096).root
        benchmark.startMeasurement()
        layOutAndDisplayEverything(root)
        benchmark.stopMeasurement()
    }

    // MARK: idle before-waiting check

    Benchmark("Transactions idle: commitIfNeeded with nothing dirty",
              configuration: .init(metrics: metrics, scalingFactor: .kilo)) { benchmark in
        let pipeline = Fixtures.sharedPipeline
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { pipeline.commitIfNeeded(reason: .beforeWaiting) }
        benchmark.stopMeasurement()
    }

    Benchmark("Naive idle baseline: lay out + display a 64-layer tree every turn",
              configuration: .init(metrics: metrics, scalingFactor: .kilo)) { benchmark in
        let root = Fixtures.tree(64).root
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { layOutAndDisplayEverything(root) }
        benchmark.stopMeasurement()
    }
}
