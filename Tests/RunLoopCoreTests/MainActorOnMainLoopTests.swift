import ChildProcesses
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `@MainActor` code, `DispatchQueue.main` work and loop timers on `Loop.main`, in a process
/// whose main thread runs the main loop: `swift test` keeps the main thread in
/// `dispatch_main()`, so the suite runs the `mainactor-probe` executable (built with the tests,
/// beside this test binary) and compares what it prints, step by step, with CF's order.
@Suite("MainActorOnMainLoop")
struct MainActorOnMainLoopTests {
    @Test("@MainActor jobs are main-queue work: a timer's block runs at the end of its pass, then the fast path drains actor and queue work in FIFO order (B3, L-a, X4); #997's shape works")
    func dispatchMainExecutor() throws {
        let run = try runProbe([])
        #expect(run.exitStatus == 0, "\(run.output)")
        #expect(run.lines == [
            "fd: E BT BS BW AW fd X bytes=1",
            "order: E BT BS BW AW timer block BT BS actor queue X",
            "997: timer fired",
        ])
    }

    @Test("with Loop.main as the main executor (SPI), a @MainActor job is a block-step job: FIFO with the block, before the main queue")
    func mainLoopExecutor() throws {
        let run = try runProbe(["--main-executor"])
        #expect(run.exitStatus == 0, "\(run.output)")
        #expect(run.lines == [
            "fd: E BT BS BW AW fd X bytes=1",
            "order: E BT BS BW AW timer actor block BT BS queue X",
            "997: timer fired",
        ])
    }

    @Test("a @MainActor callout reached on another loop's thread stops the process, naming the item")
    func wrongThreadIsCaught() throws {
        let run = try runProbe(["--wrong-thread"])
        #expect(run.killedBySignal, "exit status \(run.exitStatus): \(run.output)")
        #expect(run.output.contains("LoopSource 'misplaced' has a @MainActor callout but was called on thread"))
        #expect(run.output.contains("add it to Loop.main only"))
    }
}

@Suite("OwnerThreadClosures off-thread")
struct OwnerThreadClosuresOffThreadTests {
    @Test("performOnOwnerThread called off the loop's thread stops the process, naming both threads")
    func performOffThreadIsCaught() throws {
        let run = try runProbe(["--perform-off-thread"])
        #expect(run.killedBySignal, "exit status \(run.exitStatus): \(run.output)")
        #expect(run.output.contains("Loop.performOnOwnerThread called on thread"))
        #expect(run.output.contains("but this loop belongs to thread"))
    }
}

/// Runs `mainactor-probe` (built with the tests, beside this test binary); 30 s at most.
private func runProbe(_ arguments: [String]) throws -> ChildProcess.Outcome {
    let path = try #require(ChildProcess.besideThisExecutable("mainactor-probe"),
                            "mainactor-probe is missing: it is built with the tests")
    let run = try ChildProcess.run(path, arguments)
    #expect(!run.timedOut, "mainactor-probe \(arguments) did not finish within 30 s")
    return run
}
