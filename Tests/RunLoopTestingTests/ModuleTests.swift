import RunLoopTesting
import Testing

@Suite struct RunLoopTestingModule {
    @Test func reExportsTheLoop() throws {
        // The toolkit re-exports RunLoopKit: a loop on the virtual clock is reachable from it.
        let clock = VirtualClock()
        let loop = Loop(clock: clock)
        #expect(loop.clock.now == clock.now)
    }
}
