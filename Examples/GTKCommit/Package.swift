// swift-tools-version:6.1
import PackageDescription

// A GTK 4 window whose main thread runs GLib's main loop, which drives RunLoopKit's main loop
// (Docs/Hosting.md). Needs Debian's libgtk-4-dev; CI runs it under Xvfb (run-under-xvfb.sh).

/// The root package's identity is the name of the directory it was cloned into.
let rootPackage = Context.packageDirectory
    .split(separator: "/")
    .dropLast(2)
    .last
    .map { String($0).lowercased() } ?? "runloopkit"

let gtkIncludeFolders = [
    "/usr/include/gtk-4.0", "/usr/include/pango-1.0", "/usr/include/glib-2.0", "/usr/include/harfbuzz",
    "/usr/include/freetype2", "/usr/include/libpng16", "/usr/include/fribidi", "/usr/include/cairo",
    "/usr/include/pixman-1", "/usr/include/gdk-pixbuf-2.0", "/usr/include/graphene-1.0",
] + ["x86_64-linux-gnu", "aarch64-linux-gnu"].flatMap { arch in
    ["/usr/lib/\(arch)/glib-2.0/include", "/usr/lib/\(arch)/graphene-1.0/include"]
}

let package = Package(
    name: "GTKCommit",
    dependencies: [.package(path: "../..")],
    targets: [
        // The window, in C (GTK's signal macros and casts), and the compile-time check of the
        // GLib layouts RunLoopKitGLib declares without GLib's headers. Its public header needs
        // no GTK header, so only this target compiles against GTK: the include folders are
        // `pkg-config --cflags gtk4` on Debian (x86_64 and arm64), without the flags SwiftPM
        // refuses from pkg-config (-pthread, -msse).
        .target(
            name: "CGtkCommit",
            path: "Sources/CGtkCommit",
            cSettings: [.unsafeFlags(gtkIncludeFolders.map { "-I" + $0 })],
            linkerSettings: ["gtk-4", "gobject-2.0", "glib-2.0"].map { .linkedLibrary($0) }
        ),
        .executableTarget(
            name: "gtk-commit",
            dependencies: [
                "CGtkCommit",
                .product(name: "RunLoopKit", package: rootPackage),
                .product(name: "RunLoopKitGLib", package: rootPackage),
            ],
            path: "Sources/gtk-commit"
        ),
    ],
    swiftLanguageModes: [.v6]
)
