import CGtkCommit
import RunLoopKit
import RunLoopKitGLib
#if canImport(Glibc)
import Glibc
#endif

// A GTK 4 window whose main thread runs GLib's main loop, which drives Loop.main
// (Docs/Hosting.md). The button's click marks a layer and enqueues @MainActor work; the layer's
// layout → display → commit runs at BeforeWaiting, once per GLib sleep, and only the commit
// changes the GTK label — so the paint that shows the new text follows a commit made at a sleep.
// Every step is printed as it happens (CI's check-trace.py reads it):
//
//   click 1                              the button's GTK signal (a GLib dispatch)
//   @MainActor job 1                     the Task the click enqueued, run by Loop.main
//   sleep 3                              BeforeWaiting: GLib is about to block (count)
//   layout label · display label         the commit's phases, inside that BeforeWaiting
//   commit 1 at beforeWaiting: "…"       the commit sets the label's text
//   wake 3                               AfterWaiting
//   paint "…"                            GTK's frame clock paints (the label's text then)

gtkcommit_line_buffered_stdout()   // one line at a time: CI reads the trace while the window is up

guard gtkcommit_init() != 0 else {
    print("gtk-commit: no display (run under Xvfb: run-under-xvfb.sh)")
    exit(2)
}

/// What the window shows, and the layer that renders it.
@MainActor final class Model {
    var clicks = 0
    var text = "nothing committed yet"
    /// The text the last display rendered; the commit hands it to GTK.
    var rendered = "nothing committed yet"
    let window = Layer(name: "window")
    let label = Layer(name: "label")
    var sleeps = 0
}

/// The commit's sink: the one place where the GTK widget changes.
@MainActor final class LabelSink: CommitSink {
    let model: Model
    init(model: Model) { self.model = model }
    nonisolated func deliver(_ snapshot: CommitSnapshot) {
        MainActor.assumeIsolated {
            guard !snapshot.displayed.isEmpty else { return }
            gtkcommit_set_label(model.rendered)
            print("commit \(snapshot.frameNumber) at \(snapshot.reason): \"\(model.rendered)\"")
        }
    }
}

let model = Model()
model.window.addSublayer(model.label)
model.label.onLayout = { _ in MainActor.assumeIsolated { print("layout label") } }
model.label.onDisplay = { _, _ in
    MainActor.assumeIsolated {
        model.rendered = model.text
        print("display label")
    }
}
let pipeline = CommitPipeline.current
let sink = LabelSink(model: model)
pipeline.sink = sink
let standard = StandardObservers(installedOn: Loop.main, pipeline: pipeline)
// BeforeWaiting and AfterWaiting as this example sees them: first and last of their activity.
let sleeps = LoopObserver(activities: [.beforeWaiting], order: Int.min, label: "sleep", onMainActor: { _, _ in
    model.sleeps += 1
    print("sleep \(model.sleeps)")
})
let wakes = LoopObserver(activities: [.afterWaiting], order: Int.min, label: "wake", onMainActor: { _, _ in
    print("wake \(model.sleeps)")
})
Loop.main.add(sleeps, mode: .common)
Loop.main.add(wakes, mode: .common)

let hosted = try GLibMainContext.defaultContext().host(Loop.main)
gtkcommit_show_window("RunLoopKit on GTK", "Commit", { _ in
    MainActor.assumeIsolated {
        model.clicks += 1
        let click = model.clicks
        print("click \(click)")
        model.label.setNeedsLayout()
        Task { @MainActor in
            model.text = "clicked \(click) (committed)"
            model.label.setNeedsDisplay()
            print("@MainActor job \(click)")
        }
    }
}, { _ in
    MainActor.assumeIsolated { print("paint \"\(String(cString: gtkcommit_label_text()))\"") }
}, nil)
gtkcommit_run()
hosted.end()
standard.uninstall()
