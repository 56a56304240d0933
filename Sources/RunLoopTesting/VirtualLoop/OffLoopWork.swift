import RunLoopKit
import Runtime

/// One piece of work a virtual-loop test saw leave its loop, or come to it from elsewhere, with
/// the stack where that happened (kept unsymbolicated until a failure is written).
struct OffLoopWork: Sendable {
    enum Kind: Sendable, Equatable {
        /// A job, wake-up, signal or send from another thread (named), which the loop did not
        /// wait for: Dispatch work, a task that ran elsewhere, a sleep on a real clock.
        case arrival(thread: String, input: String)
    }

    let kind: Kind
    /// Virtual time when it happened.
    let time: LoopInstant
    let backtrace: Backtrace?

    /// One line (plus a frame or two) for a failure's details.
    func describe(with cache: SymbolicationCache) -> String {
        let site = cache.site(of: backtrace)
        switch kind {
        case .arrival(let thread, let input):
            let from = site.place.map { "from \($0)" }
                ?? "with no frame of the program on the stack (the runtime resumed a task there: a sleep on a real clock, an await of work that ran elsewhere)"
            return "\(input) arrived from thread '\(thread)' at \(time), \(from); the loop did not wait for it, so where it "
                + "lands among the loop's jobs depends on timing"
        }
    }
}

/// Symbolicates backtraces once each and finds the place in the program's own code where a
/// piece of work started: the first frame that is not the Swift runtime, a thunk, or
/// RunLoopKit's own code.
struct SymbolicationCache {
    struct Site {
        /// `file:line:column` of the program's frame, relative to the working directory.
        var place: String?
        /// The API it went through, when a frame names it (`Task.detached`, `Task {…}`).
        var api: String?
    }

    private let workingDirectory: String? = SymbolicationCache.currentDirectory()

    func site(of backtrace: Backtrace?) -> Site {
        guard let backtrace, let symbolicated = backtrace.symbolicated() else { return Site() }
        var site = Site()
        for frame in symbolicated.frames {
            guard let symbol = frame.symbol else { continue }
            if site.api == nil { site.api = Self.api(named: symbol.name) }
            guard !frame.isSwiftThunk, let location = symbol.sourceLocation,
                  !location.path.isEmpty, !location.path.contains("<compiler-generated>"), !Self.isToolkit(location.path) else { continue }
            site.place = "\(relative(location.path)):\(location.line):\(location.column)"
            return site
        }
        return site
    }

    /// Frames of RunLoopKit's own sources (the hooks, the sink, the loop's callouts).
    private static func isToolkit(_ path: String) -> Bool {
        ["/Sources/RunLoopTesting/", "/Sources/RunLoopCore/", "/Sources/PThreads/"].contains { path.contains($0) }
    }

    private static func api(named name: String) -> String? {
        if name.contains("Task") && name.contains("detached(") { return "Task.detached" }
        if name.contains("Task") && name.contains("immediate") { return "Task.immediate" }
        if name.hasPrefix("Task") && name.contains("init(") { return "Task {…}" }
        if name.contains("addTask(") { return "a task group's child" }
        return nil
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

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
