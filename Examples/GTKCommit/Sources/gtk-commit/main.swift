import CGtkCommit
#if canImport(Glibc)
import Glibc
#endif

// A GTK 4 window on GLib's main loop. Skeleton: the window, the click and the paint are
// traced; RunLoopKit's main loop joins once the core's hosted run is in (Docs/Hosting.md).

guard gtkcommit_init() != 0 else {
    print("gtk-commit: no display (run under Xvfb: run-under-xvfb.sh)")
    exit(2)
}

final class Example {
    var lines: [String] = []
    var clicks = 0
}

let example = Example()
let context = Unmanaged.passRetained(example).toOpaque()
gtkcommit_show_window("RunLoopKit on GTK", "Commit", { context in
    let example = Unmanaged<Example>.fromOpaque(context!).takeUnretainedValue()
    example.clicks += 1
    example.lines.append("clicked \(example.clicks)")
    gtkcommit_set_label("clicked \(example.clicks)")
}, { context in
    Unmanaged<Example>.fromOpaque(context!).takeUnretainedValue().lines.append("paint")
}, context)
gtkcommit_run()
print(example.lines.joined(separator: "\n"))
