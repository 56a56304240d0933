/// Supplies a layer's work. **Documented choice:** user work comes from a delegate *or* from
/// closures on the layer (`Layer.onLayout` / `Layer.onDisplay`); when a closure is set it is used
/// instead of the delegate for that kind of work. Subclassing is not offered (`Layer` is final) so
/// the pipeline's callouts stay visible in one place.
///
/// The delegate is held weakly, like `CALayer.delegate`.
///
/// ```swift
/// final class Card: LayerDelegate {
///     func layout(_ layer: Layer) { /* position sublayers */ }
///     func display(_ layer: Layer, dirtyRect: LayerRect) { /* draw dirtyRect */ }
/// }
/// let card = Card()
/// layer.delegate = card
/// ```
public protocol LayerDelegate: AnyObject {
    /// Lay out `layer`'s sublayers (`-layoutSublayers`). Called once per layout pass.
    func layout(_ layer: Layer)
    /// Draw `layer`'s content; `dirtyRect` is the union of everything invalidated since the last
    /// display (the full `bounds` after a plain `setNeedsDisplay()`).
    func display(_ layer: Layer, dirtyRect: LayerRect)
}

extension LayerDelegate {
    public func layout(_ layer: Layer) {}
    public func display(_ layer: Layer, dirtyRect: LayerRect) {}
}
