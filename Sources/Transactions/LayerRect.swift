/// A rectangle in a layer's own coordinate space, used for dirty regions.
///
/// A deliberately small type (no Foundation): origin, size, union and emptiness.
///
/// ```swift
/// let a = LayerRect(x: 0, y: 0, width: 10, height: 10)
/// let b = LayerRect(x: 20, y: 5, width: 5, height: 5)
/// a.union(b)   // LayerRect(x: 0, y: 0, width: 25, height: 10)
/// ```
public struct LayerRect: Hashable, Sendable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The empty rectangle at the origin.
    public static let zero = LayerRect(x: 0, y: 0, width: 0, height: 0)

    /// True when the rectangle covers no area (zero or negative width or height).
    public var isEmpty: Bool { !(width > 0 && height > 0) }

    public var maxX: Double { x + width }
    public var maxY: Double { y + height }

    /// The smallest rectangle containing both. An empty rectangle contributes nothing, so
    /// unioning into an empty dirty region yields the other rectangle unchanged.
    public func union(_ other: LayerRect) -> LayerRect {
        if other.isEmpty { return self }
        if isEmpty { return other }
        let minX = Swift.min(x, other.x), minY = Swift.min(y, other.y)
        let maxX = Swift.max(self.maxX, other.maxX), maxY = Swift.max(self.maxY, other.maxY)
        return LayerRect(x: minX, y: minY, width: maxX - minX, height: maxY - minY)
    }

    public var description: String { "(\(x), \(y), \(width), \(height))" }
}
