import Synchronization

private let nextLayerSerial = Atomic<UInt64>(1)
/// Bumped by every structural change (insert/remove) of any layer tree; a root whose tree-order
/// numbering is older renumbers before its layers are sorted for display.
private let treeStructureGeneration = Atomic<UInt64>(1)

/// A node of the layer tree: Core Animation's `CALayer` reduced to what the commit needs —
/// a tree, layout and display invalidation, and user-supplied work (see `LayerDelegate`).
///
/// Marks (`setNeedsLayout`, `setNeedsDisplay`) only note the request and open this thread's
/// implicit transaction; the work runs at the next commit of `CommitPipeline.current`. Marks
/// coalesce: three `setNeedsLayout()` calls give one layout.
///
/// A layer is confined to one thread (it is not `Sendable`): create, mutate and mark it on the
/// thread whose pipeline commits it.
///
/// ```swift
/// let root = Layer(name: "root")
/// let child = Layer(name: "child")
/// root.addSublayer(child)
/// child.onLayout = { layer in print("layout", layer.name) }
/// child.setNeedsLayout()
/// child.setNeedsLayout()          // coalesced
/// LayerTransaction.flush()             // or wait for the run loop's commit: prints "layout child" once
/// ```
public final class Layer {
    /// A label used in diagnostics and commit snapshots.
    public let name: String
    /// Creation order, process-wide; breaks ties between separate trees.
    public let serial: UInt64

    /// Weak, like `CALayer.delegate`.
    public weak var delegate: LayerDelegate?

    // The state a commit reads of every layer is stored in properties this module alone can see
    // (public ones are computed): when every access to a class's property is in view and none
    // overlaps another, the optimiser drops Swift's run-time exclusivity check, which would cost
    // more per layer than the commit's own work. Keep them private or internal.

    /// Layout work; when set, used instead of `delegate.layout(_:)`.
    public var onLayout: ((Layer) -> Void)? {
        get { layoutWork }
        set { layoutWork = newValue }
    }
    private var layoutWork: ((Layer) -> Void)?
    /// Display work; when set, used instead of `delegate.display(_:dirtyRect:)`.
    public var onDisplay: ((Layer, LayerRect) -> Void)? {
        get { displayWork }
        set { displayWork = newValue }
    }
    private var displayWork: ((Layer, LayerRect) -> Void)?

    /// The layer's own coordinate space; `setNeedsDisplay()` invalidates all of it.
    public var bounds: LayerRect

    /// The parent. Not retained (the parent owns its sublayers); a parent clears this pointer in
    /// its children when it is freed, so it never dangles. `unowned(unsafe)` instead of `weak`
    /// because weak loads cost ~10 ns each and tree-order comparisons walk parents.
    public var superlayer: Layer? { parent }
    private unowned(unsafe) var parent: Layer?
    /// The children, back to front.
    public private(set) var sublayers: [Layer] = []
    /// 0 for a root; parent's depth + 1 otherwise.
    public var depth: Int { treeDepth }
    private var treeDepth = 0
    /// Position in `superlayer.sublayers` (tree order).
    private(set) var indexInSuperlayer: Int = 0
    /// Tree-order rank (root serial, pre-order index), valid while `rankGeneration` equals the
    /// current structure generation.
    private var cachedTreeOrderRank = 0
    /// The structure generation `cachedTreeOrderRank` was computed at (0 = never).
    private var rankGeneration: UInt64 = 0
    /// Bits (1 << phase) of the pipeline queue phases this layer waits in (`LayerPhaseBits`).
    var queuedPhases: UInt8 = 0

    /// True from `setNeedsLayout()` until this layer's layout runs.
    public var needsLayout: Bool { layoutRequested }
    private var layoutRequested = false
    /// True from `setNeedsDisplay()` until this layer's display runs.
    public var needsDisplay: Bool { pendingDirtyRect != nil }
    /// The union of everything invalidated since the last display; nil when clean.
    public var dirtyRect: LayerRect? { pendingDirtyRect }
    private var pendingDirtyRect: LayerRect?

    /// - Parameters:
    ///   - name: label for diagnostics and snapshots (default `layer#<serial>`).
    ///   - bounds: default 100×100 at the origin.
    public init(name: String? = nil, bounds: LayerRect = LayerRect(x: 0, y: 0, width: 100, height: 100)) {
        let serial = nextLayerSerial.wrappingAdd(1, ordering: .relaxed).oldValue
        self.serial = serial
        self.name = name ?? "layer#\(serial)"
        self.bounds = bounds
    }

    deinit {
        // Children outliving their parent become roots; the unowned(unsafe) pointer must not dangle.
        for child in sublayers {
            child.parent = nil
            child.indexInSuperlayer = 0
            child.updateDepth(0)
        }
        if !sublayers.isEmpty { treeStructureGeneration.add(1, ordering: .relaxed) }
    }

    // MARK: - Tree

    /// Appends `layer` as the frontmost child, removing it from its previous parent first.
    ///
    /// ```swift
    /// parent.addSublayer(child)   // child.depth == parent.depth + 1
    /// ```
    public func addSublayer(_ layer: Layer) {
        insertSublayer(layer, at: sublayers.count)
    }

    /// Inserts `layer` at `index` (clamped to `0...sublayers.count`).
    ///
    /// Inserting a layer into its own subtree is a programming error (it would make a cycle) and
    /// stops with a message naming both layers.
    public func insertSublayer(_ layer: Layer, at index: Int) {
        precondition(layer !== self, "Layer.insertSublayer: cannot add layer '\(name)' to itself")
        var ancestor: Layer? = self
        while let current = ancestor {
            precondition(current !== layer,
                         "Layer.insertSublayer: '\(layer.name)' is an ancestor of '\(name)'; adding it would make a cycle")
            ancestor = current.parent
        }
        layer.removeFromSuperlayer()
        let position = Swift.max(0, Swift.min(index, sublayers.count))
        sublayers.insert(layer, at: position)
        layer.parent = self
        treeStructureGeneration.add(1, ordering: .relaxed)
        renumberSublayers(from: position)
        layer.updateDepth(depth + 1)
    }

    /// Detaches the layer from its parent; it becomes a root (depth 0).
    public func removeFromSuperlayer() {
        guard let parent else { return }
        let position = indexInSuperlayer
        parent.sublayers.remove(at: position)
        parent.renumberSublayers(from: position)
        self.parent = nil
        treeStructureGeneration.add(1, ordering: .relaxed)
        indexInSuperlayer = 0
        updateDepth(0)
    }

    private func renumberSublayers(from position: Int) {
        for index in position..<sublayers.count { sublayers[index].indexInSuperlayer = index }
    }

    private func updateDepth(_ newDepth: Int) {
        guard treeDepth != newDepth else { return }
        treeDepth = newDepth
        for child in sublayers { child.updateDepth(newDepth + 1) }
    }

    /// The root of this layer's tree.
    public var rootLayer: Layer {
        var top = self
        while let parent = top.parent { top = parent }
        return top
    }

    // MARK: - Invalidation (marks)

    /// Notes that the layer needs layout and returns immediately; the layout runs at the next
    /// commit. Opens this thread's implicit transaction if none is open.
    ///
    /// ```swift
    /// layer.setNeedsLayout()
    /// layer.needsLayout   // true until the commit (or layoutIfNeeded) lays it out
    /// ```
    public func setNeedsLayout() {
        if layoutRequested { return }          // coalesced: already queued
        layoutRequested = true
        CommitPipeline.current.layerDidRequestLayout(self)
    }

    /// Notes that the whole layer needs display (dirty rect = `bounds`).
    public func setNeedsDisplay() {
        setNeedsDisplay(in: bounds)
    }

    /// Adds `rect` to the layer's invalid region; the region passed to display is the union.
    ///
    /// ```swift
    /// layer.setNeedsDisplay(in: LayerRect(x: 0, y: 0, width: 10, height: 10))
    /// layer.setNeedsDisplay(in: LayerRect(x: 50, y: 50, width: 10, height: 10))
    /// layer.dirtyRect   // (0, 0, 60, 60)
    /// ```
    public func setNeedsDisplay(in rect: LayerRect) {
        if let current = pendingDirtyRect {   // coalesced: already queued, just widen the region
            pendingDirtyRect = current.union(rect)
            return
        }
        pendingDirtyRect = rect
        CommitPipeline.current.layerDidRequestDisplay(self)
    }

    // MARK: - Immediate work

    /// If layout is pending here or above, lays it out now: finds the highest ancestor (or this
    /// layer) that needs layout, then lays out every layer needing layout in that subtree, parents
    /// before children. Does nothing, and calls nothing, when no layout is pending.
    ///
    /// ```swift
    /// child.setNeedsLayout()
    /// child.layoutIfNeeded()   // layout runs now, not at the commit
    /// ```
    public func layoutIfNeeded() {
        var top: Layer? = needsLayout ? self : nil
        var ancestor = parent
        while let current = ancestor {
            if current.needsLayout { top = current }
            ancestor = current.parent
        }
        guard let start = top else { return }
        start.layoutSubtreeIfNeeded()
    }

    private func layoutSubtreeIfNeeded(in pipeline: CommitPipeline = .current) {
        performLayoutIfNeeded(in: pipeline)
        // Index loop: a layout may add or remove sublayers; the current list is what counts.
        var index = 0
        while index < sublayers.count {
            sublayers[index].layoutSubtreeIfNeeded(in: pipeline)
            index += 1
        }
    }

    /// Runs this layer's display now if it needs display ("outside of the normal update cycle").
    public func displayIfNeeded() {
        performDisplayIfNeeded()
    }

    // MARK: - Callouts (used by the pipeline too)

    /// Clears the flag *before* the callout, so a layout that re-marks its own layer queues a new
    /// pass instead of being swallowed.
    @discardableResult
    func performLayoutIfNeeded(in pipeline: CommitPipeline = .current) -> Bool {
        guard layoutRequested else { return false }
        layoutRequested = false
        pipeline.willLayOut(self)
        if let layoutWork { layoutWork(self) } else { delegate?.layout(self) }
        return true
    }

    @discardableResult
    func performDisplayIfNeeded(in pipeline: CommitPipeline = .current) -> LayerRect? {
        guard let rect = pendingDirtyRect else { return nil }
        pendingDirtyRect = nil
        pipeline.willDisplay(self, dirtyRect: rect)
        if let displayWork { displayWork(self, rect) } else { delegate?.display(self, dirtyRect: rect) }
        return rect
    }
}

extension Layer: CustomStringConvertible {
    public var description: String { "Layer(\(name), depth \(depth))" }
}

extension Layer {
    /// Sort key for tree (pre-order) order: an ancestor before its descendants, siblings back to
    /// front, separate trees by their roots' creation order (root serial in the high 32 bits,
    /// pre-order index in the low 32). Cached per layer; when any tree changed shape since, the
    /// layer's whole tree is renumbered once (O(tree size)); otherwise O(1).
    var treeOrderRank: Int {
        let generation = treeStructureGeneration.load(ordering: .relaxed)
        if rankGeneration != generation { rootLayer.numberPreorder(generation: generation) }
        return cachedTreeOrderRank
    }

    private func numberPreorder(generation: UInt64) {
        let high = Int(truncatingIfNeeded: serial &<< 32)
        var next = 0
        var stack: [Layer] = [self]
        while let layer = stack.popLast() {
            layer.cachedTreeOrderRank = high | next
            layer.rankGeneration = generation
            next += 1
            // Push children back to front so the first child is visited first.
            var index = layer.sublayers.count
            while index > 0 {
                index -= 1
                stack.append(layer.sublayers[index])
            }
        }
    }
}
