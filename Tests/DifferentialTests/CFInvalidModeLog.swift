// CFRunLoop writes one line to standard error the first time a thread runs the common
// pseudo-mode ("invalid mode 'kCFRunLoopCommonModes' provided to CFRunLoopRunSpecific …", once
// per process). Scripts run that mode on purpose (R1: running the common pseudo-mode returns at
// once), so the first such run happens here, with standard error captured: the suite checks the
// line instead of printing it.

import CoreFoundation
import Foundation
import RunLoopDiagnostics
#if canImport(Glibc)
import Glibc
#endif

enum CFInvalidModeLog {
    /// What CF wrote while running the common pseudo-mode once, on a fresh thread, before any
    /// script runs on CF. Lines other threads wrote meanwhile are passed on to standard error.
    static let captured: String = ScriptRunner.onFreshThread("CF's invalid-mode log line") { captureFirstRun() }

    private static func captureFirstRun() -> String {
        var ends: [Int32] = [0, 0]
        let saved = dup(2)
        guard saved >= 0, pipe(&ends) == 0 else { return "" }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        while dup2(ends[1], 2) < 0 && errno == EINTR {}
        close(ends[1])
        _ = CFRunLoopRunInMode(kCFRunLoopCommonModes, 0, true)
        while dup2(saved, 2) < 0 && errno == EINTR {}
        close(saved)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(ends[0], &chunk, chunk.count)
            if count > 0 { bytes += chunk[0..<count]; continue }
            if count < 0 && errno == EINTR { continue }
            break   // 0: every writer closed; EAGAIN: nothing more was written
        }
        close(ends[0])
        let text = String(decoding: bytes, as: UTF8.self)
        let others = text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.isEmpty && !$0.contains("provided to CFRunLoopRunSpecific") }
        for line in others { StandardErrorLine.write(String(line)) }
        return text
    }
}
