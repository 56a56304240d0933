import RunLoopCore

/// An observer installed by an instrument, remembered without keeping its loop alive
/// (a loop keeps its interceptor and sinks; a strong reference back would be a cycle).
struct InstalledObserver {
    weak var loop: Loop?
    let observer: LoopObserver
    let mode: Loop.Mode

    /// Removes and invalidates the observer if its loop still exists.
    func remove() {
        loop?.remove(observer, mode: mode)
        observer.invalidate()
    }
}
