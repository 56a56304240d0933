// The soak (issue 15, item 6): fd I/O, ports, timers and the commit pipeline together under load
// for a while, then proof that nothing was lost and nothing grew.
//
//   swift run -c release runloopkit-soak 600    # ten minutes (not in CI)
//   swift run runloopkit-soak 60                # what .ci/run runs
//
// One loop on the main thread with the standard observers (pools, commit pipeline); two producer
// threads send numbered messages to a port with the library's defaults (bounded: a full one makes
// them wait); a writer thread pushes bytes through a pipe the loop reads with an fd source; a
// repeating timer schedules one-shot timers; every port message marks a layer, so commits run at
// BeforeWaiting; another thread creates and tears down short-lived loops (port, timer,
// autoreleased objects) all along.
// At the end it drains, then checks: every message arrived once and in order per producer,
// every byte was read, every one-shot timer fired once, RSS grew ≤ 5 % from the end of the
// warm-up, and the process has the descriptors and threads it started with. Exit status 0 only
// if all hold.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import PThreads
import RunLoopKit
import Synchronization

let seconds = CommandLine.arguments.dropFirst().first.flatMap(Double.init) ?? 60
let start = MonotonicClock.shared.now
let warmUpEnd = start.advanced(by: .seconds(min(max(seconds * 0.1, 2), 30)))
let end = start.advanced(by: .seconds(seconds))
let descriptorsAtStart = SoakProcess.openDescriptors()
let threadsAtStart = SoakProcess.threads()

let stopping = Atomic<Bool>(false)
let producerCount = 2
let sent = SoakCounters(producerCount)
let bytesWritten = Atomic<Int>(0)

let loop = Loop(clock: MonotonicClock.shared)
let pipeline = CommitPipeline(clock: LoopTransactionClock(MonotonicClock.shared))
var report = SoakReport()

pipeline.asCurrent {
    let standard = StandardObservers(installedOn: loop, pipeline: pipeline)
    let layer = Layer(name: "soak")
    var commits = 0
    pipeline.addAfterCommitHook { _ in commits += 1 }

    // Ports: numbered messages, checked in order per producer.
    var received = [Int](repeating: 0, count: producerCount)
    var outOfOrder = 0
    let port: LoopPortSource
    do {
        // The library's defaults (issue 28: a soak sets no capacity of its own).
        port = try LoopPortSource(label: "soak-port", onOwnerThreadOf: loop) { message in
            guard case .bytes(let bytes) = message, bytes.count == 9 else { outOfOrder += 1; return }
            let producer = Int(bytes[0])
            let number = bytes[1...].reduce(0) { $0 << 8 | Int($1) }
            if number != received[producer] { outOfOrder += 1 }
            received[producer] = number + 1
            _ = AutoreleasePool.autorelease(SoakPayload())
            layer.setNeedsDisplay()
        }
    } catch {
        print("soak: cannot create its port: \(error)")
        exit(1)
    }
    loop.add(port, mode: .default)

    // fd I/O: a pipe, read until empty at each readiness.
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else { fatalError("pipe failed: errno \(errno)") }
    _ = fcntl(pipeEnds[0], F_SETFL, fcntl(pipeEnds[0], F_GETFL) | O_NONBLOCK)
    var bytesRead = 0
    var buffer = [UInt8](repeating: 0, count: 4096)
    let file = LoopFileSource(fd: pipeEnds[0], events: .readable, label: "soak-pipe", onOwnerThreadOf: loop) { _ in
        while true {
            let count = read(pipeEnds[0], &buffer, buffer.count)
            if count <= 0 { break }
            bytesRead += count
        }
    }
    loop.add(file, mode: .default)

    // Timers: a repeating one that schedules a one-shot timer 1–4 ms ahead at every fire.
    var oneShotsScheduled = 0
    var oneShotsFired = 0
    var oneShotsPending: [LoopTimer] = []
    let ticker = try! LoopTimer(after: .milliseconds(1), interval: .milliseconds(2),
                                label: "soak-ticker", onOwnerThreadOf: loop) { _ in
        oneShotsPending.removeAll { !$0.isValid }
        let oneShot = try! LoopTimer(after: .milliseconds(1 + oneShotsScheduled % 4),
                                     label: "soak-one-shot", onOwnerThreadOf: loop) { _ in oneShotsFired += 1 }
        oneShotsScheduled += 1
        oneShotsPending.append(oneShot)
        loop.add(oneShot, mode: .default)
    }
    loop.add(ticker, mode: .default)

    var threads: [pthread_t] = []
    for producer in 0..<producerCount {
        threads.append(startPThread(name: "soak-producer") {
            var number = 0
            while !stopping.load(ordering: .relaxed) {
                var bytes = [UInt8(producer)]
                for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: number >> shift)) }
                do {
                    try port.send(.bytes(bytes), waitingUpTo: .milliseconds(100))
                    number += 1
                    sent.set(producer, number)
                } catch {
                    continue   // full at the deadline: the same number again
                }
            }
        })
    }
    let writeEnd = pipeEnds[1]
    threads.append(startPThread(name: "soak-writer") {
        var chunk = [UInt8](repeating: 0x5A, count: 512)
        while !stopping.load(ordering: .relaxed) {
            let count = write(writeEnd, &chunk, chunk.count)   // blocks while the pipe is full
            if count > 0 { bytesWritten.add(count, ordering: .relaxed) }
        }
    })
    threads.append(startPThread(name: "soak-loops") {
        while !stopping.load(ordering: .relaxed) { SoakShortLoop.runOnce() }
    })

    // The load: run in slices until the end, sampling RSS at the end of the warm-up.
    var rssAtWarmUp = 0
    while MonotonicClock.shared.now < end {
        loop.run(mode: .default, timeout: .milliseconds(100))
        if rssAtWarmUp == 0 && MonotonicClock.shared.now >= warmUpEnd { rssAtWarmUp = ProcessMemory.residentBytes() }
    }
    let rssAtEnd = ProcessMemory.residentBytes()

    // Drain: stop the producers and the ticker, keep running while the threads finish (the
    // writer may be blocked on a full pipe), then until everything sent arrived (at most 10 s).
    stopping.store(true, ordering: .relaxed)
    ticker.invalidate()
    let started = threads
    let joined = Atomic<Bool>(false)
    let joiner = startPThread(name: "soak-joiner") {
        for thread in started { pthread_join(thread, nil) }
        joined.store(true, ordering: .releasing)
    }
    let drainDeadline = MonotonicClock.shared.now.advanced(by: .seconds(10))
    while MonotonicClock.shared.now < drainDeadline {
        loop.run(mode: .default, timeout: .milliseconds(20))
        if joined.load(ordering: .acquiring) && received == sent.all && bytesRead == bytesWritten.load(ordering: .relaxed)
            && !oneShotsPending.contains(where: \.isValid) { break }
    }
    pthread_join(joiner, nil)

    report.messagesSent = sent.all.reduce(0, +)
    report.messagesLost = zip(sent.all, received).map { max($0 - $1, 0) }.reduce(0, +)
    report.outOfOrder = outOfOrder
    report.bytesLost = bytesWritten.load(ordering: .relaxed) - bytesRead
    report.bytesRead = bytesRead
    report.oneShotsScheduled = oneShotsScheduled
    report.oneShotsLost = oneShotsScheduled - oneShotsFired
    report.commits = commits
    report.pendingLayers = pipeline.pendingLayerCount
    report.shortLoops = SoakShortLoop.completed.load(ordering: .relaxed)
    report.shortLoopsIncomplete = SoakShortLoop.incomplete.load(ordering: .relaxed)
    report.rssAtWarmUp = rssAtWarmUp
    report.rssAtEnd = rssAtEnd

    port.invalidate()
    file.invalidate()
    standard.uninstall()
    loop.tearDown()
    close(pipeEnds[0])
    close(pipeEnds[1])
}
report.liveObjects = SoakPayload.live.load(ordering: .relaxed)
report.descriptors = (descriptorsAtStart, SoakProcess.openDescriptors())
report.threads = (threadsAtStart, SoakProcess.threads())
print(report.text(seconds: seconds))
exit(report.holds ? 0 : 1)
