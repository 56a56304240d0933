/// A pool entry that runs a closure when its pool pops, in the same LIFO order as the objects
/// around it (the pool releases it; its deinit does the work).
final class DeferredCleanup {
    let label: String
    private let work: () -> Void

    init(label: String, work: @escaping () -> Void) {
        self.label = label
        self.work = work
    }

    deinit { work() }
}
