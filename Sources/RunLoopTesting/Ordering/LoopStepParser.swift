import RunLoopKit

/// Why an expected-steps text could not be read: which step, and what is wrong with it.
///
/// ```swift
/// do { _ = try LoopStep.parse("entry · sourse(s)") } catch { print(error) }
/// // step 2 "sourse(s)": unknown name "sourse"; expected one of entry, beforeTimers, …
/// ```
public struct LoopStepParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// 1-based position of the step in the text.
    public let step: Int
    /// The step's text as written.
    public let text: String
    /// What is wrong with it.
    public let problem: String

    public var description: String { "step \(step) \"\(text)\": \(problem)" }
}

extension LoopStep {
    /// Reads the compact form: steps separated by `·` or line breaks, each a name or
    /// `name(argument)` (see ``LoopStep``). Activities may also be given by their CF names
    /// (`kCFRunLoopBeforeWaiting`), as the published logs print them.
    ///
    /// ```swift
    /// let steps = try LoopStep.parse("entry · timer(t1) · source(s) · beforeWaiting · commit")
    /// ```
    public static func parse(_ text: String) throws(LoopStepParseError) -> [LoopStep] {
        let pieces = text.split(whereSeparator: { $0 == "·" || $0.isNewline })
            .map { $0.trimmingWhitespace }
            .filter { !$0.isEmpty }
        var steps: [LoopStep] = []
        for (index, piece) in pieces.enumerated() {
            steps.append(try step(piece, number: index + 1))
        }
        return steps
    }

    private static func step(_ text: String, number: Int) throws(LoopStepParseError) -> LoopStep {
        func failure(_ problem: String) -> LoopStepParseError {
            LoopStepParseError(step: number, text: text, problem: problem)
        }
        let name: String
        let argument: String?
        if let open = text.firstIndex(of: "(") {
            guard text.hasSuffix(")") else { throw failure("an argument must end with \")\"") }
            name = String(text[..<open])
            argument = String(text[text.index(after: open)..<text.index(before: text.endIndex)])
        } else {
            name = text
            argument = nil
        }
        if let activity = LoopStepName.activities.first(where: { $0.name == name || $0.activity.cfName == name })?.activity {
            guard argument == nil else { throw failure("\(name) takes no argument") }
            return .activity(activity)
        }
        if name == "commit" {
            guard argument == nil else { throw failure("commit takes no argument") }
            return .commit
        }
        let kinds: [(String, (String) -> LoopStep)] = LoopStepName.callouts.map { entry in
            (entry.name, { label in .callout(entry.kind, label: label) })
        } + [("layout", LoopStep.layout), ("display", LoopStep.display), ("log", LoopStep.log), ("mark", LoopStep.mark)]
        guard let make = kinds.first(where: { $0.0 == name })?.1 else {
            let known = LoopStepName.activities.map(\.name) + ["commit"] + kinds.map { "\($0.0)(…)" }
            throw failure("unknown name \"\(name)\"; expected one of \(known.joined(separator: ", "))")
        }
        guard let argument, !argument.isEmpty else { throw failure("\(name) needs an argument: \(name)(…)") }
        return make(argument)
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (no Foundation in this module's API).
    var trimmingWhitespace: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
