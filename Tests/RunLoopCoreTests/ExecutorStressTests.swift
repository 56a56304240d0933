import Testing
import PThreads
@testable import RunLoopCore

@Suite("Executor stress")
struct ExecutorStressTests {
    @Test("100,000 tasks enqueued from 8 threads onto one loop: each runs exactly once, on the loop's thread")
    func hundredThousandTasks() {
        let threads = 8, perThread = 12_500
        let worker = LoopThread(name: "exec-stress")
        let tally = JobTally(loop: worker.loop, count: threads * perThread)
        let producers = (0..<threads).map { t in
            BackgroundThread {
                for i in 0..<perThread {
                    let id = t * perThread + i
                    Task(executorPreference: worker.loop) { tally.record(id) }
                }
            }
        }
        for producer in producers { producer.join() }
        // 60 s: under ThreadSanitizer on a shared 2-core machine 100,000 tasks take a while.
        tally.allRan.wait("100,000 tasks did not all run on the loop within 60 s", limit: .seconds(60))
        worker.stop()
        #expect(tally.ranTotal == threads * perThread)
        #expect(tally.ranOnceEach, "some task ran twice or not at all")
    }

    @Test("W3: a chain of tasks on the loop's own thread (noted wake-ups) while 4 threads enqueue: no job waits for a lost wake-up")
    func notedAndWrittenWakeUpsTogether() {
        let chained = 20_000, threads = 4, perThread = 5_000
        let worker = LoopThread(name: "exec-noted")
        let tally = JobTally(loop: worker.loop, count: chained + threads * perThread)
        // Each link runs on the loop's thread and enqueues the next there: its wake-up is noted,
        // and the producers' wake-ups meet those notes (skipped writes) all the time.
        @Sendable func link(_ id: Int) {
            Task(executorPreference: worker.loop) {
                tally.record(id)
                if id + 1 < chained { link(id + 1) }
            }
        }
        link(0)
        let producers = (0..<threads).map { t in
            BackgroundThread {
                for i in 0..<perThread {
                    let id = chained + t * perThread + i
                    Task(executorPreference: worker.loop) { tally.record(id) }
                }
            }
        }
        for producer in producers { producer.join() }
        tally.allRan.wait("not every job ran within 60 s: a wake-up was lost, or the chain stalled", limit: .seconds(60))
        worker.stop()
        #expect(tally.ranTotal == chained + threads * perThread)
        #expect(tally.ranOnceEach, "some task ran twice or not at all")
    }
}
