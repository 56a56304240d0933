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
}
