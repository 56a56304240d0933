/// Builds an expected sequence of ``LoopStep``s from statements, with `if`, `for` and arrays.
///
/// ```swift
/// harness.expectSteps {
///     LoopStep.entry
///     LoopStep.timer("t1")
///     for name in ["a", "b"] { LoopStep.source(name) }
///     LoopStep.beforeWaiting
/// }
/// ```
@resultBuilder
public enum LoopStepsBuilder {
    public static func buildExpression(_ step: LoopStep) -> [LoopStep] { [step] }
    public static func buildExpression(_ steps: [LoopStep]) -> [LoopStep] { steps }
    public static func buildBlock(_ parts: [LoopStep]...) -> [LoopStep] { parts.flatMap { $0 } }
    public static func buildOptional(_ steps: [LoopStep]?) -> [LoopStep] { steps ?? [] }
    public static func buildEither(first steps: [LoopStep]) -> [LoopStep] { steps }
    public static func buildEither(second steps: [LoopStep]) -> [LoopStep] { steps }
    public static func buildArray(_ parts: [[LoopStep]]) -> [LoopStep] { parts.flatMap { $0 } }
}
