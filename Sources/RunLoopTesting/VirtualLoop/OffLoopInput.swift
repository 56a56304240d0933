import RunLoopKit
import Runtime
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An input a virtual-loop test's loop got from another thread without waiting for it (Dispatch
/// work, a task that ran elsewhere), with the stack of the thread that made it, kept
/// unsymbolicated until a failure is written.
struct OffLoopInput: Sendable {
    /// What came: "a job or wake-up", "a signal of source0 'x'", "a message to port 'y'".
    let what: String
    /// The name of the thread it came from.
    let thread: String
    /// Virtual time when it came.
    let time: LoopInstant
    let backtrace: Backtrace?

    /// One line for a failure's details: what, from where, and why it matters.
    func describe(finding places: StartingPlaces) -> String {
        let from = places.place(in: backtrace).map { "from \($0)" }
            ?? "with no frame of the program on the stack (the runtime resumed a task there: an await of work that "
            + "ran elsewhere, a sleep on a real clock begun off the loop)"
        return "\(what) arrived from thread '\(thread)' at \(time), \(from); the loop did not wait for it, so where it "
            + "lands among the loop's jobs depends on timing"
    }
}

/// The stack of the calling thread, for a finding to say later where the program's code was.
enum ProgramStack {
    /// The process's images, read once (the first `withVirtualLoop` reads it, before any finding
    /// is symbolicated) and given to every capture. A capture that read them itself would parse
    /// the ELF header of every mapped file, and one that another thread unmaps meanwhile (a
    /// symbolication that has finished with the test binary's debug information) faults.
    static let images = ImageMap.capture()

    static func capture() -> Backtrace? { try? Backtrace.capture(images: images) }
}

/// Finds where in the program's own code a piece of work started: the first frame of a
/// backtrace, symbolicated, that is not the Swift runtime, a thunk, compiler-generated code or
/// RunLoopKit's own sources, written `file:line:column` (`file:line` where the frame has no
/// column) relative to the working directory.
///
/// One is made for each test's report and asked once per finding. It remembers the place of
/// each stack it has seen: symbolication reads the debug line tables for every frame (about
/// 30 ms a frame in a debug build), and the stacks of one test repeat (the 16 sleeps kept from a
/// polling loop have one stack), so one symbolication serves them all.
final class StartingPlaces {
    private let workingDirectory: String? = StartingPlaces.currentDirectory()
    /// Each stack's place (nil: none found), keyed by the stack's addresses.
    private var placesByStack: [[Backtrace.Address]: String?] = [:]

    func place(in backtrace: Backtrace?) -> String? {
        guard let backtrace else { return nil }
        let stack = backtrace.frames.map(\.originalProgramCounter)
        if let known = placesByStack[stack] { return known }
        let place = firstPlaceOfTheProgram(in: backtrace)
        placesByStack[stack] = place
        return place
    }

    private func firstPlaceOfTheProgram(in backtrace: Backtrace) -> String? {
        guard let symbolicated = backtrace.symbolicated() else { return nil }
        for frame in symbolicated.frames {
            guard !frame.isSwiftThunk, let location = frame.symbol?.sourceLocation, !location.path.isEmpty,
                  !location.path.contains("<compiler-generated>"), !Self.isToolkit(location.path) else { continue }
            // An async function's resume point has a line and no column (0).
            let column = location.column > 0 ? ":\(location.column)" : ""
            return "\(relative(location.path)):\(location.line)\(column)"
        }
        return nil
    }

    /// Frames of RunLoopKit's own sources (the sink, the loop's enqueue).
    private static func isToolkit(_ path: String) -> Bool {
        ["/Sources/RunLoopTesting/", "/Sources/RunLoopCore/", "/Sources/PThreads/"].contains { path.contains($0) }
    }

    private func relative(_ path: String) -> String {
        guard let base = workingDirectory, path.hasPrefix(base + "/") else { return path }
        return String(path.dropFirst(base.count + 1))
    }

    private static func currentDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
