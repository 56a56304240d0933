extension Loop {
    /// A run-loop mode: a named set of observers, sources and timers (M1).
    ///
    /// Modes are created on demand by adding an item, performing a block or `stop(mode:)`,
    /// and never removed. `.common` is the common-modes pseudo-mode (M3): adding an item to it
    /// adds the item to every common mode; it cannot be run (R1).
    ///
    /// ```swift
    /// let scrolling: Loop.Mode = "Scrolling"
    /// loop.addCommonMode(scrolling)
    /// ```
    public struct Mode: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The mode's name (CF's mode string).
        public let name: String
        /// A mode with the given name.
        public init(_ name: String) { self.name = name }
        public init(stringLiteral value: String) { self.name = value }
        public var description: String { name }

        /// `kCFRunLoopDefaultMode`, the initial and only initial common mode (M2).
        public static let `default` = Mode("kCFRunLoopDefaultMode")
        /// `kCFRunLoopCommonModes`, the pseudo-mode (M3, M5).
        public static let common = Mode("kCFRunLoopCommonModes")
        /// `UITrackingRunLoopMode`, a convenience name; not common unless added with `addCommonMode`.
        public static let tracking = Mode("UITrackingRunLoopMode")
    }

    /// Run-loop activities with CF's raw values (1, 2, 4, 32, 64, 128 — not Foundation's
    /// shifted `_Activity` values, F4).
    ///
    /// ```swift
    /// let observer = LoopObserver(activities: [.beforeWaiting, .exit]) { _, activity in
    ///     print(activity.cfName)   // "kCFRunLoopBeforeWaiting" / "kCFRunLoopExit"
    /// }
    /// ```
    public struct Activity: OptionSet, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        public static let entry = Activity(rawValue: 1)
        public static let beforeTimers = Activity(rawValue: 2)
        public static let beforeSources = Activity(rawValue: 4)
        public static let beforeWaiting = Activity(rawValue: 32)
        public static let afterWaiting = Activity(rawValue: 64)
        public static let exit = Activity(rawValue: 128)
        public static let allActivities = Activity(rawValue: 0x0FFF_FFFF)

        /// CF's constant name for a single activity ("kCFRunLoopEntry", …); for a combination,
        /// the names joined with "|"; for an unknown bit, its hex value.
        public var cfName: String {
            switch self {
            case .entry: return "kCFRunLoopEntry"
            case .beforeTimers: return "kCFRunLoopBeforeTimers"
            case .beforeSources: return "kCFRunLoopBeforeSources"
            case .beforeWaiting: return "kCFRunLoopBeforeWaiting"
            case .afterWaiting: return "kCFRunLoopAfterWaiting"
            case .exit: return "kCFRunLoopExit"
            case .allActivities: return "kCFRunLoopAllActivities"
            default:
                let known: [Activity] = [.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit]
                let names = known.filter { contains($0) }.map(\.cfName)
                let rest = rawValue & ~known.reduce(0) { $0 | $1.rawValue }
                let hex = rest == 0 ? [] : ["0x" + String(rest, radix: 16)]
                return (names + hex).joined(separator: "|")
            }
        }

        /// Short names as used in traces: E, BT, BS, BW, AW, X.
        public var shortName: String {
            switch self {
            case .entry: return "E"
            case .beforeTimers: return "BT"
            case .beforeSources: return "BS"
            case .beforeWaiting: return "BW"
            case .afterWaiting: return "AW"
            case .exit: return "X"
            default: return cfName
            }
        }

        public var description: String { cfName }
    }

    /// Why a run returned, with CF's raw values (`kCFRunLoopRunFinished` = 1, …).
    ///
    /// ```swift
    /// if loop.run(mode: .default, timeout: 0) == .timedOut { /* nothing was ready */ }
    /// ```
    public enum RunResult: Int32, Sendable {
        /// The mode was missing or empty (R3/R4), or became empty (end of a pass).
        case finished = 1
        /// `stop()` or `stop(mode:)`.
        case stopped = 2
        /// The timeout elapsed.
        case timedOut = 3
        /// `returnAfterSourceHandled` and a source (or the async queue) was handled.
        case handledSource = 4
    }
}

/// Errors for refused input. Nothing was changed when one is thrown.
///
/// ```swift
/// do { _ = try LoopTimer(fireAt: .zero, interval: .seconds(-1)) { _ in } }
/// catch { print(error) }   // "LoopTimer interval is negative (-1.0 seconds): …"
/// ```
public enum LoopError: Error, CustomStringConvertible, Equatable, Sendable {
    /// A negative duration where only zero or more makes sense; `what` names the parameter.
    case negativeDuration(Duration, what: String)
    /// A NaN number of seconds given to a `Double` convenience; `what` names the parameter.
    case notANumber(what: String)
    /// A descriptor the object needs could not be created (the process is out of descriptors
    /// or memory: EMFILE, ENFILE, ENOMEM); nothing was created.
    case systemCall(SystemCallError)

    public var description: String {
        switch self {
        case let .negativeDuration(duration, what):
            return "\(what) is negative (\(duration)): a duration here must be zero or more"
        case let .notANumber(what):
            return "\(what) is NaN: a number of seconds must be a number"
        case let .systemCall(failure):
            return "\(failure)"
        }
    }
}
