import RunLoopKit

/// The soak's findings and whether they hold.
struct SoakReport {
    var messagesSent = 0
    var messagesLost = 0
    var outOfOrder = 0
    var bytesRead = 0
    var bytesLost = 0
    var oneShotsScheduled = 0
    var oneShotsLost = 0
    var commits = 0
    var pendingLayers = 0
    var shortLoops = 0
    var shortLoopsIncomplete = 0
    var liveObjects = 0
    var rssAtWarmUp = 0
    var rssAtEnd = 0
    var descriptors = (start: 0, end: 0)
    var threads = (start: 0, end: 0)

    /// RSS growth from the end of the warm-up to the end of the load, in percent.
    var rssGrowth: Double {
        rssAtWarmUp > 0 ? Double(rssAtEnd - rssAtWarmUp) * 100 / Double(rssAtWarmUp) : .infinity
    }

    var lost: Int { messagesLost + outOfOrder + bytesLost + oneShotsLost + shortLoopsIncomplete + liveObjects }

    var holds: Bool {
        lost == 0 && pendingLayers == 0 && commits > 0 && rssGrowth <= 5
            && descriptors.end == descriptors.start && threads.end == threads.start
    }

    func text(seconds: Double) -> String {
        func mib(_ bytes: Int) -> String {
            let tenths = bytes * 10 / (1 << 20)
            return "\(tenths / 10).\(tenths % 10) MiB"
        }
        let growth = rssGrowth.isFinite ? "\((rssGrowth * 100).rounded() / 100)%" : "not measured"
        return """
        soak: \(Int(seconds)) s
          messages  sent \(messagesSent), lost \(messagesLost), out of order \(outOfOrder)
          pipe      bytes read \(bytesRead), lost \(bytesLost)
          timers    one-shots \(oneShotsScheduled), not fired \(oneShotsLost)
          commits   \(commits), layers left pending \(pendingLayers)
          loops     short-lived \(shortLoops), incomplete \(shortLoopsIncomplete)
          objects   autoreleased payloads alive \(liveObjects)
          lost = \(lost)
          RSS       \(mib(rssAtWarmUp)) after warm-up → \(mib(rssAtEnd)) at the end: \(growth) (limit 5%)
          fds       \(descriptors.start) → \(descriptors.end)
          threads   \(threads.start) → \(threads.end)
        \(holds ? "PASS" : "FAIL")
        """
    }
}
