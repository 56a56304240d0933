#if canImport(Glibc)
import Glibc
#endif
import PThreads
import RunLoopDiagnostics
import Synchronization
@testable import Transactions

/// Records callouts as short strings: "L(name)", "D(name)", "C", "Cb:reason", …
final class CalloutLog {
    var entries: [String] = []
    func callAsFunction(_ entry: String) { entries.append(entry) }
    /// Returns the entries so far and clears them.
    func take() -> [String] {
        defer { entries.removeAll() }
        return entries
    }
}

/// A sink that logs "C" for every delivered snapshot and keeps the snapshots.
final class RecordingSink: CommitSink {
    let log: CalloutLog
    var snapshots: [CommitSnapshot] = []
    init(log: CalloutLog) { self.log = log }
    func deliver(_ snapshot: CommitSnapshot) {
        snapshots.append(snapshot)
        log("C")
    }
}

/// An isolated pipeline on a manual clock, with a callout log, a recording sink, a diagnostics
/// recorder (capturing the commit diagnostics, which the tests assert) and a wake-up counter.
final class Harness {
    let clock = ManualTransactionClock(start: LoopInstant(nanoseconds: 1_000_000_000))
    let pipeline: CommitPipeline
    let log = CalloutLog()
    let sink: RecordingSink
    let recorder = DiagnosticsRecorder(capturing: [.commitLayoutLoop, .commitThreadExitedUncommitted, .commitReentrantCommit])
    var wakeUps = 0
    /// Names of the layers made by `layer(_:)`, to tell this harness's diagnostics from those of
    /// tests running in parallel.
    private var layerNames: Set<String> = []

    init(maxLayoutRounds: Int = 4) {
        pipeline = CommitPipeline(clock: clock, maxLayoutRounds: maxLayoutRounds)
        sink = RecordingSink(log: log)
        pipeline.sink = sink
        pipeline.wakeUpHandler = { [unowned self] in self.wakeUps += 1 }
    }

    /// A layer whose layout/display log "L(name)"/"D(name)" and then run the optional extras.
    func layer(_ name: String, layout: ((Layer) -> Void)? = nil, display: ((Layer, LayerRect) -> Void)? = nil) -> Layer {
        layerNames.insert(name)
        let layer = Layer(name: name)
        layer.onLayout = { [log] layer in
            log("L(\(layer.name))")
            layout?(layer)
        }
        layer.onDisplay = { [log] layer, rect in
            log("D(\(layer.name))")
            display?(layer, rect)
        }
        return layer
    }

    /// The `commit.*` diagnostics about this harness: its pipeline's thread or its layers.
    var diagnostics: [Diagnostic] {
        recorder.diagnostics.filter { diagnostic in
            guard diagnostic.id.rawValue.hasPrefix("commit."), let item = diagnostic.item else { return false }
            return item == pipeline.threadName || item.split(separator: ", ").allSatisfy { layerNames.contains(String($0)) }
        }
    }

    /// Runs `body` with this harness's pipeline as the thread's current one.
    func run<R>(_ body: () throws -> R) rethrows -> R { try pipeline.asCurrent(body) }
}

/// Test-only stand-in for the umbrella's observers: plays one BeforeWaiting or Exit notification
/// in CFRunLoop's order — observers sorted by increasing `order`, the commit at 2000000 between
/// UIKit-style hooks at 1999000 and 2001000. (The umbrella adds the real loop-level tests.)
final class ObserverDriver {
    enum Activity { case beforeWaiting, exit }
    private var observers: [(order: Int, body: (Activity) -> Void)] = []
    let pipeline: CommitPipeline

    init(pipeline: CommitPipeline, log: CalloutLog?) {
        self.pipeline = pipeline
        if let log {
            add(order: 1_999_000) { _ in log("pre") }
            add(order: 2_001_000) { _ in log("post") }
        }
        add(order: 2_000_000) { [pipeline] activity in
            pipeline.commitIfNeeded(reason: activity == .beforeWaiting ? .beforeWaiting : .exit)
        }
    }

    func add(order: Int, _ body: @escaping (Activity) -> Void) {
        observers.append((order, body))
        observers.sort { $0.order < $1.order }   // stable: equal orders keep registration order
    }

    func notify(_ activity: Activity) {
        for observer in observers { observer.body(activity) }
    }
}

/// Counts deinits of `Canary` objects, to prove something was released.
final class DeinitCounter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .acquiring) }
    func increment() { count.add(1, ordering: .acquiringAndReleasing) }
}

final class Canary: Sendable {
    let counter: DeinitCounter
    init(_ counter: DeinitCounter) { self.counter = counter }
    deinit { counter.increment() }
}

/// A thread-safe bag for results produced on another thread (pthread mutex, TSan-visible).
/// Sendable without `@unchecked`: its only stored property is a `Locked`.
final class SharedBox<Value>: Sendable {
    private let storage: Locked<Value>
    init(_ value: Value) { storage = Locked(value) }
    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
    func update(_ change: (inout Value) -> Void) { storage.withLock { change(&$0) } }
}

/// A weak reference set on one thread and read on another (after a join), through a lock.
final class WeakBox: Sendable {
    private struct Reference { weak var object: AnyObject? }
    private let storage = Locked(Reference())
    var object: AnyObject? {
        get { storage.withLock { $0.object } }
        set { storage.withLock { $0.object = newValue } }
    }
}
