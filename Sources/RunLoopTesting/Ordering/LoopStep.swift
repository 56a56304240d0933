import RunLoopKit

/// One step of what a loop did, as the ordering assertions compare it: an activity, a callout,
/// a commit phase, or a line the test logged.
///
/// Each step has a compact text form, used in expected strings and in failure reports:
///
/// | step | text |
/// |---|---|
/// | activities | `entry`, `beforeTimers`, `beforeSources`, `beforeWaiting`, `afterWaiting`, `exit` |
/// | callouts | `source(label)`, `port(label)`, `fd(label)`, `timer(label)`, `block(label)`, `mainQueue(label)`, `job(label)`, `observer(label)` |
/// | commit phases | `layout(layer)`, `display(layer)`, `commit` |
/// | the test's own lines | `log(text)`, `mark(name)` |
///
/// ```swift
/// let steps: [LoopStep] = [.entry, .timer("t1"), .source("s"), .beforeWaiting, .layout("root"), .commit]
/// print(steps.map(\.description).joined(separator: " · "))
/// // entry · timer(t1) · source(s) · beforeWaiting · layout(root) · commit
/// ```
public enum LoopStep: Hashable, Sendable, CustomStringConvertible {
    /// An activity the loop notified.
    case activity(Loop.Activity)
    /// A callout of an item with this label (`source` is a source0, `port` a port source,
    /// `fd` an fd source).
    case callout(LoopEvent.Callout, label: String)
    /// A layer laid out by a commit.
    case layout(String)
    /// A layer displayed by a commit.
    case display(String)
    /// A commit delivered (after its layout and display).
    case commit
    /// A line the test logged (`TraceRecorder.log`).
    case log(String)
    /// A named point the test recorded (`TraceRecorder.mark`).
    case mark(String)

    public static let entry = LoopStep.activity(.entry)
    public static let beforeTimers = LoopStep.activity(.beforeTimers)
    public static let beforeSources = LoopStep.activity(.beforeSources)
    public static let beforeWaiting = LoopStep.activity(.beforeWaiting)
    public static let afterWaiting = LoopStep.activity(.afterWaiting)
    public static let exit = LoopStep.activity(.exit)

    /// A source0's perform.
    public static func source(_ label: String) -> LoopStep { .callout(.source0, label: label) }
    /// A port source's handler.
    public static func port(_ label: String) -> LoopStep { .callout(.source1, label: label) }
    /// An fd source's handler.
    public static func fd(_ label: String) -> LoopStep { .callout(.fileSource, label: label) }
    /// A timer's callout.
    public static func timer(_ label: String) -> LoopStep { .callout(.timer, label: label) }
    /// A `perform` block.
    public static func block(_ label: String) -> LoopStep { .callout(.block, label: label) }
    /// Work `submit`ted to the loop's queue (the main queue on the main loop).
    public static func mainQueue(_ label: String) -> LoopStep { .callout(.mainQueue, label: label) }
    /// A Swift Concurrency job run by the loop as an executor.
    public static func job(_ label: String) -> LoopStep { .callout(.job, label: label) }
    /// An observer's callout.
    public static func observer(_ label: String) -> LoopStep { .callout(.observer, label: label) }

    /// The compact text form, e.g. `timer(t1)` or `beforeWaiting`.
    public var description: String {
        switch self {
        case .activity(let activity): LoopStepName.activity(activity)
        case .callout(let kind, let label): "\(LoopStepName.callout(kind))(\(label))"
        case .layout(let layer): "layout(\(layer))"
        case .display(let layer): "display(\(layer))"
        case .commit: "commit"
        case .log(let text): "log(\(text))"
        case .mark(let name): "mark(\(name))"
        }
    }
}

/// The names of the compact text form, one table for printing and parsing.
enum LoopStepName {
    static let activities: [(name: String, activity: Loop.Activity)] = [
        ("entry", .entry), ("beforeTimers", .beforeTimers), ("beforeSources", .beforeSources),
        ("beforeWaiting", .beforeWaiting), ("afterWaiting", .afterWaiting), ("exit", .exit),
    ]
    static let callouts: [(name: String, kind: LoopEvent.Callout)] = [
        ("source", .source0), ("port", .source1), ("fd", .fileSource), ("timer", .timer), ("block", .block),
        ("mainQueue", .mainQueue), ("job", .job), ("observer", .observer),
    ]

    static func activity(_ activity: Loop.Activity) -> String {
        activities.first { $0.activity == activity }?.name ?? "activity(0x\(String(activity.rawValue, radix: 16)))"
    }

    static func callout(_ kind: LoopEvent.Callout) -> String {
        callouts.first { $0.kind == kind }?.name ?? "\(kind)"
    }
}
