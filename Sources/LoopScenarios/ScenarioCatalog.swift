/// Every documented scenario, in the order the main job runs them.
///
/// ```swift
/// for scenario in ScenarioCatalog.all { print(scenario.name, "—", scenario.summary) }
/// let one = ScenarioCatalog.named("lag-monitor")
/// ```
package enum ScenarioCatalog {
    package static let all: [Scenario] = [
        SeedScenarios.code1Source0,
        SeedScenarios.code1Button,
        SeedScenarios.code2NestedBlocks,
        CommitCoalescingScenario.scenario,
        AutoreleaseSawtoothScenario.scenario,
        AutoreleaseBusySourceScenario.scenario,
        TimerTrackingModeScenario.scenario,
        PerformInDefaultModeScenario.scenario,
        ResidentThreadScenario.scenario,
        WaitForCallbackScenario.scenario,
        LagMonitorScenario.scenario,
        MemoryPeakAttributionScenario.scenario,
    ]

    /// The scenario with this exact name, or nil.
    package static func named(_ name: String) -> Scenario? {
        all.first { $0.name == name }
    }
}
