import RunLoopKit

/// Records the labels of callouts and the short names of activities, in order, from a loop's
/// event sink: the sequence a test asserts.
final class CalloutLog: LoopEventSink, @unchecked Sendable {
    // Written only on the loop's thread; read by the test after the run on the same thread.
    private(set) var entries: [String] = []

    func loop(_ loop: Loop, emitted event: LoopEvent) {
        switch event.kind {
        case .activity(let activity): entries.append(activity.shortName)
        case .calloutBegin: entries.append(event.label)
        default: break
        }
    }

    /// Appends a line of the test's own (a layout or display callback, say).
    func note(_ line: String) { entries.append(line) }

    /// The entries without activity names: only callout labels.
    func callouts(excluding ignored: Set<String> = []) -> [String] {
        let activityNames: Set<String> = ["E", "BT", "BS", "BW", "AW", "X"]
        return entries.filter { !activityNames.contains($0) && !ignored.contains($0) }
    }
}

/// Counts live `Tracked` objects of one test (tests run in parallel, so no global counter).
final class LiveCount {
    var value = 0
}

/// An object whose lifetime a test observes through its `LiveCount`.
final class Tracked {
    private let count: LiveCount
    init(_ count: LiveCount) {
        self.count = count
        count.value += 1
    }
    deinit { count.value -= 1 }
}
